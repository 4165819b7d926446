// Declarations of @agentsync/client/react.
import type { ApprovalResponse, Message, QuestionResponse, SendOptions, Session, Status, UserPart, View } from './index.js';

export interface SessionState {
  /** The same object until something changes; unchanged messages keep their identity. */
  view: View;
  status: Status;
  /** Posts a user message: a string becomes one text part. */
  send(parts: string | UserPart[], opts?: SendOptions): Promise<Message>;
  /** Answers a pending interaction. */
  answer(interactionId: string, response: ApprovalResponse | QuestionResponse): Promise<Message>;
  /** Stops the running turn. */
  stop(): Promise<Message>;
  /** Loads the next older page into the view. */
  loadOlder(): Promise<void>;
}

/**
 * Subscribes a component to a session (built with createSession or
 * connect). Without one yet (null, undefined) the view is empty and idle
 * and the calls reject with a 'closed' AgentsyncError.
 */
export declare function useSession(session: Session | null | undefined): SessionState;
