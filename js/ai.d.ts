// Declarations of @agentsync/client/ai: an agentsync view as AI SDK
// UIMessage[], structural types assignable to `ai`'s UIMessage
// (examples/vite-react type-checks that with the `ai` it pins), and
// AgentsyncChatTransport, typed with `ai`'s own ChatTransport.
import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { ActionPart, BranchCount, BranchList, ErrorPart, Message, Session, UserPart, View } from './index.js';

/** The data parts the bridge adds, by name (`data-${name}`). */
export interface AgentsyncDataTypes {
  'agentsync-question': { question: string; tool_call_id: string; status: 'pending' | 'resolved' | 'cancelled'; answer?: string };
  'agentsync-action': { action_type: string; state: ActionPart['state']; title?: string };
  'agentsync-error': { scope: ErrorPart['scope']; code: string; message: string; recoverable: boolean };
  'agentsync-context': { context: string; tag?: string };
}

type ToolBase = { type: `tool-${string}`; toolCallId: string };
export type AgentsyncToolUIPart = ToolBase &
  (
    | { state: 'input-streaming'; input?: unknown }
    | { state: 'input-available'; input: unknown }
    | { state: 'approval-requested'; input: unknown; approval: { id: string } }
    | { state: 'approval-responded'; input: unknown; approval: { id: string; approved: boolean } }
    | { state: 'output-available'; input: unknown; output: unknown; approval?: { id: string; approved: true } }
    | { state: 'output-error'; input: unknown; errorText: string; approval?: { id: string; approved: true } }
    | { state: 'output-denied'; input: unknown; approval: { id: string; approved: false } }
  );

export type AgentsyncUIPart =
  | { type: 'text'; text: string; state?: 'streaming' | 'done' }
  | { type: 'reasoning'; id: string; text: string; state: 'streaming' | 'done' }
  | { type: 'file'; mediaType: string; url: string; filename?: string }
  | AgentsyncToolUIPart
  | { type: 'data-agentsync-question'; id: string; data: AgentsyncDataTypes['agentsync-question'] }
  | { type: 'data-agentsync-action'; id: string; data: AgentsyncDataTypes['agentsync-action'] }
  | { type: 'data-agentsync-error'; id: string; data: AgentsyncDataTypes['agentsync-error'] }
  | { type: 'data-agentsync-context'; id: string; data: AgentsyncDataTypes['agentsync-context'] }
  /** A data part of the server's own data_type (the scripted model's "chart", say). */
  | { type: `data-${string}`; id?: string; data: unknown };

export interface AgentsyncUIMessage {
  /** The agentsync message_id. */
  id: string;
  role: 'user' | 'assistant';
  parts: AgentsyncUIPart[];
}

/** Every message of the view, oldest first, as UIMessages. */
export declare function toUIMessages(view: View | { messages: Message[] }): AgentsyncUIMessage[];
export declare function toUIMessage(message: Message): AgentsyncUIMessage;
/** The text of a failed tool's output: its `error` field, or the output as JSON. */
export declare function errorText(output: unknown): string;

/**
 * Wraps a ChatTransport so that useChat's stop() stops the agent's turn on
 * the server (POST {api}/{chatId}/stop, the session's stop action): an
 * aborted request alone (a reload, a lost network) stops nothing, since
 * the server resumes a turn across those.
 */
export declare function withServerStop<T extends { sendMessages: (...args: any[]) => Promise<unknown>; reconnectToStream: (...args: any[]) => Promise<unknown> }>(
  transport: T,
  opts: { api: string; headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>); fetch?: typeof fetch },
): T;

// ------------------------------------------------------------ the transport
// Typed with the `ai` package's own ChatTransport and UIMessageChunk (an
// optional peer dependency: only this part of the declarations needs it).

/** One page of a session's history as UIMessages (loadUIMessages). */
export interface UIMessagePage {
  /** Oldest first: the newest `limit` messages before `before` (or the head). */
  messages: AgentsyncUIMessage[];
  /** Older messages exist: pass `before` back to read them. */
  hasMore: boolean;
  /** The cursor of the next older page; undefined when there is none. */
  before?: number;
  /** Each message's sequence (its position in the session's path), by UIMessage id. */
  sequences: Map<string, number>;
  /** The page's positions with more than one version (a BranchPicker's ‹ index+1 / count ›). */
  branches: Array<BranchCount & { messageId?: string }>;
}

/**
 * The session's history as UIMessages for useChat({messages}) after a
 * reload (GET /v1/sessions/{id}/messages). A reply still streaming is in
 * it as it is now; resumeStream() replaces it by the whole reply.
 */
export declare function loadUIMessages(session: Session, opts?: { limit?: number; before?: number }): Promise<UIMessagePage>;

/** A UIMessage's parts as an agentsync user message's (text, file, data-*, data-agentsync-context). */
export declare function toUserParts(message: { parts: ReadonlyArray<{ type: string } & Record<string, unknown>> }): UserPart[];

export interface AgentsyncChatTransportOptions {
  /** A connected Session: the chat follows it (and after a regenerate or an edit, the fork it made). */
  session: Session;
  /** Told the Session the chat moved to (a fork, switchBranch); the old one is closed. */
  onSessionChange?: (session: Session) => void;
  /** Whether an abort of a request (useChat's stop()) stops the turn on the server; default true. */
  stopOnAbort?: boolean;
}

/**
 * useChat's ChatTransport on the kit's own sync: sendMessages posts the new
 * user message only (POST /v1/sessions/{id}/messages), and the reply's
 * UIMessageChunks come from the synced view (the module and its WebSocket),
 * not from server-sent events. A regenerate or an edit forks the
 * conversation and follows the fork; reconnectToStream replays the reply
 * still streaming from its start (resumeStreamIsReplay), so a reload
 * resumes with no character doubled; an abort (stop()) stops the turn on
 * the server.
 */
export declare class AgentsyncChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  constructor(opts: AgentsyncChatTransportOptions);
  /** The Session the chat is on now (a fork after a regenerate or an edit). */
  readonly session: Session;
  /**
   * useChat's id for this chat: the session the transport was made with,
   * kept when the transport moves to a fork. Pass it as useChat({id}); an id
   * that follows `session` makes useChat start a new Chat on every switch.
   */
  readonly chatId: string;
  readonly resumeStreamIsReplay: true;
  sendMessages: ChatTransport<UI_MESSAGE>['sendMessages'];
  reconnectToStream: ChatTransport<UI_MESSAGE>['reconnectToStream'];
  /** Stops the session's running turn (the stop action); false when none ran. */
  stop(): Promise<boolean>;
  /** loadUIMessages of the current session; its ids are remembered for edits and branches. */
  loadMessages(opts?: { limit?: number; before?: number }): Promise<UIMessagePage>;
  /** The versions at the position of the message with this UIMessage id. */
  branches(id: string): Promise<BranchList>;
  /** The positions of the path with more than one version. */
  alternatives(params?: { from?: number; to?: number }): Promise<BranchCount[]>;
  /** Moves the chat to another session of the conversation (closing the old one); then load its history. */
  switchBranch(sessionId: string): Promise<Session>;
  /** The sequence of a message the chat holds, by its UIMessage id. */
  sequenceOf(id: string): Promise<number>;
}

/** Turns successive states of one agent message into the UIMessageChunks that build it, sending only what is new. */
export declare class ChunkEmitter {
  emit(message: Message): UIMessageChunk[];
  seed(message: Message, client: ReadonlyArray<{ type: string; text?: string; state?: string }>): void;
}
