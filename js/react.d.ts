// Declarations of @agentsync/client/react.
import type { ApprovalResponse, BranchList, LocalView, Message, OutboxEntry, QuestionResponse, SendOptions, Session, SessionInfo, Status, UserPart, Viewer } from './index.js';

export interface SessionState {
  /** The same object until something changes; unchanged messages keep their identity. */
  view: LocalView;
  status: Status | 'cached';
  /** The sends not committed yet, in order (with a cache or an outbox; Session.outbox). */
  outbox: OutboxEntry[];
  /** Posts a failed send again (Session.retrySend). */
  retrySend(id: string): Promise<Message>;
  /** Drops a failed or queued send (Session.discardSend). */
  discardSend(id: string): Promise<boolean>;
  /** The current branch: the session id of the path the view shows (null without a session). */
  branch: string | null;
  /**
   * Per position (a message's sequence) with more than one alternative:
   * how many, and which one (0-based) this path takes, for the ‹ index+1 /
   * count › arrows. Read beside the messages, never inside them; refreshed
   * when the path grows or this hook forks, and by the subscription's
   * alternatives signals in between.
   */
  alternatives: Readonly<Record<number, { count: number; index: number }>>;
  /** Who follows the session now and who is typing (presence signals). */
  presence: readonly Viewer[];
  /** Posts a user message: a string becomes one text part. */
  send(parts: string | UserPart[], opts?: SendOptions): Promise<Message>;
  /** Answers a pending interaction. */
  answer(interactionId: string, response: ApprovalResponse | QuestionResponse): Promise<Message>;
  /** Stops the running turn. */
  stop(): Promise<Message>;
  /** Loads the next older page into the view. */
  loadOlder(): Promise<void>;
  /** Forks the session before beforeSequence (Session.fork). */
  fork(beforeSequence: number, opts?: { parts?: string | UserPart[]; regenerate?: boolean }): Promise<SessionInfo>;
  /** Edits the user message at sequence, keeping the original (Session.edit). */
  edit(sequence: number, parts: string | UserPart[]): Promise<SessionInfo>;
  /** Answers the reply at sequence again, keeping the original (Session.regenerate). */
  regenerate(sequence: number): Promise<SessionInfo>;
  /** The alternatives at a position, each with the session to switch to. */
  branches(sequence: number): Promise<BranchList>;
  /**
   * Connects to another branch and closes this one: resolves with the new
   * Session, which the app passes to useSession in place of this one.
   */
  switchBranch(sessionId: string): Promise<Session>;
}

/**
 * Subscribes a component to a session (built with createSession or
 * connect). Without one yet (null, undefined) the view is empty and idle
 * and the calls reject with a 'closed' AgentsyncError.
 */
export declare function useSession(session: Session | null | undefined): SessionState;

/**
 * The principal's session list, live (GET /v1/sessions/subscribe): null
 * until the first list, then every session, newest activity first.
 */
export declare function useSessions(url: string | null | undefined, opts?: { token?: string; WebSocket?: typeof WebSocket }): SessionInfo[] | null;
