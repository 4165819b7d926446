// Declarations of @agentsync/client/assistant-ui.
import type { AssistantRuntime, AppendMessage, ThreadMessage, ThreadMessageLike, ExternalStoreAdapter } from '@assistant-ui/react';
import type { Delivery, Message, Session, UserPart } from './index.js';

export interface AgentsyncRuntimeOptions {
  /**
   * Told the new Session after the runtime followed a branch switch, an
   * edit or a regeneration (each a switchBranch: the old Session is
   * closed). Keep it to close it later; do not pass it back as the hook's
   * argument unless you mean to start over from it.
   */
  onSessionChange?: (session: Session) => void;
  /** assistant-ui adapters (attachments, speech, feedback...), as useExternalStoreRuntime takes them. */
  adapters?: ExternalStoreAdapter['adapters'];
  /** What a message sent while a turn runs does (Session.send's delivery); default the server's, 'steer'. */
  delivery?: Delivery;
  /** Receives a failed send, edit, regeneration, stop or switch; without it they reject into assistant-ui. */
  onError?: (err: unknown) => void;
}

/**
 * An assistant-ui runtime on an agentsync session, for
 * `<AssistantRuntimeProvider runtime={...}>`: Thread, BranchPicker, the
 * edit composer, attachments and tool UIs (approvals and questions through
 * respondToApproval) act on the session. Without a session yet (null,
 * undefined) the thread is empty and disabled.
 */
export declare function useAgentsyncRuntime(session: Session | null | undefined, opts?: AgentsyncRuntimeOptions): AssistantRuntime;

/**
 * One agentsync message as a ThreadMessageLike (id = message_id;
 * metadata.custom = {sequence, session_id, state}).
 */
export declare function toThreadMessageLike(message: Message): ThreadMessageLike;
/** One message as a ThreadMessage: the same object for the same message object. */
export declare function toThreadMessage(message: Message): ThreadMessage;
/** An AppendMessage of assistant-ui's composer (attachments included) as the parts of a user message. */
export declare function toUserParts(message: Pick<AppendMessage, 'content'> & { attachments?: AppendMessage['attachments'] }): UserPart[];
