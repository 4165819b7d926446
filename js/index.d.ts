// TypeScript declarations of the agentsync JavaScript host. The shapes are
// those of docs/protocol.md and synccore/{model,io}.go: snake_case keys.

import type { ErrorCode } from './errcodes';

export * from './constants';

export type Role = 'user' | 'agent';
export type MessageState = 'streaming' | 'done';
export type Visibility = 'visible' | 'internal';
export type PartType = Part['type'];
export type Status = 'idle' | 'connecting' | 'syncing' | 'live' | 'backoff' | 'closed';

/** Fields every part has. */
interface PartBase {
  part_id: string;
  /** The part's 1-based position in its message; never changes. */
  sequence: number;
  /** The model step that produced an agent part. */
  step_id?: string;
}

export type StreamState = 'streaming' | 'done';

export interface TextPart extends PartBase {
  type: 'text';
  text: string;
  /** Agent text only; user text has no state. */
  state?: StreamState;
}

export interface ReasoningPart extends PartBase {
  type: 'reasoning';
  text: string;
  state: StreamState;
}

/** User context attached to a message (a selection, a file excerpt...). */
export interface ContextPart extends PartBase {
  type: 'context';
  tag?: string;
  context: string;
}

export interface FilePart extends PartBase {
  type: 'file';
  url: string;
  media_type: string;
  filename?: string;
}

export interface DataPart extends PartBase {
  type: 'data';
  data_type: string;
  data: unknown;
  /** Parts with the same data_type and data_id are one item updated in place. */
  data_id?: string;
}

interface ToolBase extends PartBase {
  type: 'tool';
  tool_call_id: string;
  tool_name: string;
}

/** The model is still writing the input: it may be partial or absent. */
export interface ToolInputStreaming extends ToolBase {
  state: 'input-streaming';
  input?: unknown;
}

/** The input is complete: not yet running, suspended on an approval, or running. */
export interface ToolPending extends ToolBase {
  state: 'input-available' | 'awaiting-approval' | 'running';
  input: unknown;
}

export interface ToolOutputAvailable extends ToolBase {
  state: 'output-available';
  input: unknown;
  output: unknown;
}

/** Failed: the output holds the error (`{error: string}` from the reference server). */
export interface ToolOutputError extends ToolBase {
  state: 'output-error';
  input?: unknown;
  output?: unknown;
}

export interface ToolOutputDenied extends ToolBase {
  state: 'output-denied';
  input: unknown;
  output?: unknown;
}

/** One tool call's whole life, narrowed by `state`. */
export type ToolPart = ToolInputStreaming | ToolPending | ToolOutputAvailable | ToolOutputError | ToolOutputDenied;
export type ToolState = ToolPart['state'];

export type InteractionStatus = 'pending' | 'resolved' | 'cancelled';

export interface ApprovalRequest {
  kind: 'approval';
  /** The tool call this approval gates (it is `awaiting-approval` meanwhile). */
  tool_call_id: string;
  tool_name: string;
  input: unknown;
  /** When the approval expires unanswered (RFC 3339, UTC): set by a server with an interaction timeout. */
  expires_at?: string;
}

export interface QuestionRequest {
  kind: 'question';
  question: string;
  tool_call_id: string;
  /** When the question expires unanswered (RFC 3339, UTC). */
  expires_at?: string;
}

export interface ApprovalResponse {
  approved: boolean;
}

export interface QuestionResponse {
  answer: string;
}

interface InteractionBase extends PartBase {
  type: 'interaction';
  interaction_id: string;
  status: InteractionStatus;
}

export interface ApprovalInteraction extends InteractionBase {
  request: ApprovalRequest;
  /** Set once resolved (one cancelled at its expires_at holds `{expired: true}` instead). */
  response?: ApprovalResponse;
}

export interface QuestionInteraction extends InteractionBase {
  request: QuestionRequest;
  /** Set once resolved (one cancelled at its expires_at holds `{expired: true}` instead). */
  response?: QuestionResponse;
}

/**
 * A question to the user; `request.kind` narrows `request`. TypeScript
 * does not narrow the part (and so its `response`) by a nested field:
 * isApproval and isQuestion do.
 */
export type InteractionPart = ApprovalInteraction | QuestionInteraction;
export type InteractionRequest = InteractionPart['request'];
/** The interaction part of a request kind. */
export type InteractionOf<K extends InteractionKind> = Extract<InteractionPart, { request: { kind: K } }>;
/** The response an interaction of request kind K takes. */
export type ResponseFor<K extends InteractionKind> = NonNullable<InteractionOf<K>['response']>;
/** Whether part is an interaction asking for an approval: narrows the part, its response included. */
export declare function isApproval(part: Part | null | undefined): part is ApprovalInteraction;
/** Whether part is an interaction asking a question: narrows the part, its response included. */
export declare function isQuestion(part: Part | null | undefined): part is QuestionInteraction;

export interface ActionPart extends PartBase {
  type: 'action';
  action_id: string;
  action_type: string;
  title?: string;
  state: 'pending' | 'completed' | 'failed';
}

export interface ErrorPart extends PartBase {
  type: 'error';
  scope: 'step' | 'turn' | 'session';
  code: string;
  message: string;
  recoverable?: boolean;
}

/**
 * One typed piece of a message, narrowed by `type` (a tool by `state`, an
 * interaction's request by `request.kind`).
 */
export type Part = TextPart | ReasoningPart | ContextPart | FilePart | DataPart | ToolPart | InteractionPart | ActionPart | ErrorPart;

export interface Message {
  message_id: string;
  session_id: string;
  sequence: number;
  revision: number;
  role: Role;
  /** Agent messages only. */
  state?: MessageState;
  turn_id?: string;
  visibility: Visibility;
  /** Unix milliseconds. */
  created_at: number;
  parts: Part[];
}

export interface MessagePage {
  items: Message[];
  total: number;
  start_sequence?: number;
  end_sequence?: number;
  next_before_sequence?: number;
  has_more: boolean;
}

/** A page read around or after a sequence: a MessagePage with its newer side. */
export interface WindowPage extends MessagePage {
  has_newer: boolean;
  next_after_sequence?: number;
}

/**
 * What a UI renders. Unchanged messages (and parts) keep their identity from
 * one view to the next; changed ones are new objects. A view is never
 * modified once handed out: a change makes a new one.
 */
export interface View {
  session_id: string;
  status: Status;
  messages: Message[];
  total: number;
  has_more_older: boolean;
  next_before_sequence?: number;
  loading_older: boolean;
  include_internal: boolean;
}

/** What a user message may hold (ids and sequences are the server's). */
export type UserPart =
  | { type: 'text'; text: string }
  | { type: 'context'; context: string; tag?: string }
  | { type: 'file'; url: string; media_type: string; filename?: string }
  | { type: 'data'; data_type: string; data: unknown; data_id?: string };

export type WasmSource = string | URL | Uint8Array | ArrayBuffer | WebAssembly.Module;

export interface ConnectOptions {
  /** The server's base URL, e.g. "http://127.0.0.1:8080". */
  url: string;
  sessionId: string;
  /**
   * Bearer token (sent as ?token= on the WebSocket, which cannot carry
   * headers in browsers), or a provider: asked for the first token, and
   * again whenever the server refuses the current one (401, 403). A new
   * token is used at once for HTTP (the refused request is sent once more)
   * and for the WebSocket; the same token again, or a provider that
   * throws, makes the refusal final (code 'unauthorized', the session
   * closes).
   */
  token?: TokenOption;
  /** Page size of snapshot reads, 1..200 (default: the core's, 50). */
  pageLimit?: number;
  includeInternal?: boolean;
  /** The module: a URL, a path (Node), bytes or a compiled module. Default: agentsync.wasm next to index.js. */
  wasm?: WasmSource;
  /** A WebSocket constructor (default: globalThis.WebSocket). */
  WebSocket?: typeof WebSocket;
  /** A fetch implementation (default: globalThis.fetch). */
  fetch?: typeof fetch;
  /** Resolve connect() only once live (default true). */
  wait?: boolean;
  /** Give up waiting for live after this long (code 'timeout'); 0 waits forever (default 30000). */
  timeoutMs?: number;
  /** How view notifications are coalesced (default 'microtask'). */
  schedule?: 'microtask' | 'frame' | ((flush: () => void) => void);
  /** Receives diagnostic lines (module output, listener errors). */
  log?: (...args: unknown[]) => void;
  /** A status listener attached before the session starts, so it sees every change. */
  onStatus?: (e: StatusEvent) => void;
  /** A view listener (subscribe) attached before the session opens: it sees the cached window, shown before the module loads. */
  onView?: (view: LocalView) => void;
  /**
   * The local cache (protocol §6.9): `true` for IndexedDB (memory where
   * there is none), a CacheStore of the app's, or options; absent or
   * false: none. With one, connect() resolves at once when a cached window
   * is shown (its view `cached`, the session's status 'cached' until the
   * core connects); the first read catches up from the oldest cached
   * message that is not done. It also turns the outbox on.
   */
  cache?: boolean | CacheStore | CacheOptions;
  /** Share one subscription between the tabs of this origin showing this session (js/tabs.js): resolves with a SharedSession. Ignored without Web Locks and BroadcastChannel. */
  shareTabs?: boolean;
  /** Who the tabs sharing a connection are (names their lock and channel); default a hash of a string token. */
  principal?: string;
  /**
   * Optimistic sends (default: on with a cache): send() shows the message
   * at once, pending, and posts the outbox in order under each message's
   * idempotency key; kept across reloads when a cache store persists it.
   */
  outbox?: boolean;
}

export interface CacheOptions {
  /** Default: IndexedDBCacheStore in a browser, MemoryCacheStore elsewhere. */
  store?: CacheStore;
  /** Whose cache it is (default: the bearer JWT's sub, a digest of a static token, or 'shared'). */
  principal?: string;
  /** The newest messages kept per session (default 2000). */
  maxMessages?: number;
  /** The most recently written sessions kept (default 50). */
  maxSessions?: number;
  /** Keep other principals' windows when the principal changes (default: they are cleared). */
  keepOtherPrincipals?: boolean;
}

/** A window kept by a CacheStore. */
export interface CachedWindow {
  meta: { total: number; has_more_older: boolean; next_before_sequence: number; include_internal: boolean; saved_at: number };
  messages: Message[];
}

/** An outbox entry as stored. */
export interface StoredSend {
  id: string;
  idempotency_key: string;
  body: { parts: UserPart[]; visibility?: Visibility; delivery?: string };
  created_at: number;
  after: number;
  order: number;
  state: 'queued' | 'sending' | 'failed';
  error?: { code: string; message: string };
}

/**
 * Where a cache keeps windows (key: principal, session and
 * include_internal) and outbox entries (key: principal and session).
 * Every method may be async. MemoryCacheStore and IndexedDBCacheStore
 * implement it; an app may give its own (or `cache: false`).
 */
export interface CacheStore {
  load(key: string): Promise<CachedWindow | null>;
  /** Upserts `put` (by sequence), drops messages older than keepFrom (0: none), sets meta. */
  write(key: string, w: { meta: CachedWindow['meta']; put: Message[]; keepFrom: number }): Promise<void>;
  delete(key: string): Promise<void>;
  list(): Promise<{ key: string; touched: number }[]>;
  /** Removes the windows and outbox entries whose key starts with prefix (all of them without). */
  clear(prefix?: string): Promise<void>;
  outbox(key: string): Promise<StoredSend[]>;
  putOutbox(key: string, entry: StoredSend): Promise<void>;
  deleteOutbox(key: string, id: string): Promise<void>;
  getMeta(name: string): Promise<unknown>;
  setMeta(name: string, value: unknown): Promise<void>;
}

export declare class MemoryCacheStore implements CacheStore {
  constructor();
  load(key: string): Promise<CachedWindow | null>;
  write(key: string, w: { meta: CachedWindow['meta']; put: Message[]; keepFrom: number }): Promise<void>;
  delete(key: string): Promise<void>;
  list(): Promise<{ key: string; touched: number }[]>;
  clear(prefix?: string): Promise<void>;
  outbox(key: string): Promise<StoredSend[]>;
  putOutbox(key: string, entry: StoredSend): Promise<void>;
  deleteOutbox(key: string, id: string): Promise<void>;
  getMeta(name: string): Promise<unknown>;
  setMeta(name: string, value: unknown): Promise<void>;
}

/** IndexedDB through `idb` (imported when first used; map it with an import map when the package is served unbundled, or pass openDB). */
export declare class IndexedDBCacheStore extends MemoryCacheStore {
  constructor(opts?: { name?: string; openDB?: (...args: any[]) => Promise<any> });
}

/** Removes every cached window and outbox of the store (default: the IndexedDB one), as a sign-out does. */
/** Whether Web Locks and BroadcastChannel exist here (shareTabs works). */
export declare function canShareTabs(): boolean;
/** A session shared between tabs (connect with shareTabs): the leader tab's Session, or a follower's copy of its views; writes go over HTTP. */
export declare class SharedSession {
  readonly sessionId: string;
  readonly status: string;
  readonly view: any;
  readonly leader: boolean;
  readonly role: 'leader' | 'follower';
  readonly presence: Array<{ principal: string; connections: number; typing: boolean }>;
  readonly closed: boolean;
  subscribe(listener: (view: any) => void): () => void;
  on(type: string, fn: (arg: any) => void): () => void;
  waitFor(predicate: (view: any) => boolean, opts?: { timeoutMs?: number }): Promise<any>;
  loadOlder(): Promise<void>;
  digest(): string;
  send(parts: any, opts?: any): Promise<any>;
  answer(interaction: any, response: any): Promise<any>;
  action(type: string, value?: any): Promise<any>;
  stop(): Promise<any>;
  close(): void;
}
export declare function clearCache(opts?: { store?: CacheStore }): Promise<void>;

/** A message of a view with a cache or an outbox: a send not committed yet is one, pending or failed. */
export type LocalMessage = Message & {
  /** A send not committed yet (its sequence is provisional, its message_id 'pending:<outbox id>'). */
  pending?: boolean;
  /** A send the server refused: retrySend(outbox_id) or discardSend(outbox_id). */
  failed?: boolean;
  error?: { code: string; message: string };
  outbox_id?: string;
};

/** The view of a session with a cache or an outbox. */
export interface LocalView extends View {
  messages: LocalMessage[];
  /** The messages are the cached window: the core has not been live since the page opened. */
  cached?: boolean;
  /** Not live because the server cannot be reached. */
  offline?: boolean;
}

/** An outbox entry as Session.outbox shows it. */
export interface OutboxEntry {
  id: string;
  idempotency_key: string;
  parts: UserPart[];
  created_at: number;
  state: 'queued' | 'sending' | 'failed';
  error?: { code: string; message: string };
}

/** A static bearer token, or a provider of the current one. */
export type TokenOption = string | (() => string | Promise<string>);

export interface StatusEvent {
  status: Status | 'cached';
  reason: string;
  /**
   * Why the session is not live: the last failure to connect or read
   * (code 'network', or the server's refusal); null while live. With
   * status 'closed' after not_found or unauthorized, what ended it.
   */
  cause: AgentsyncError | null;
}

/** The code of a request or socket that got no answer (refused, cut, unresolved): retryable, never sent by a server. */
export declare const NETWORK: 'network';

/**
 * The error code of a broken core (a recovered panic in the module, or a
 * trap): the only code after which a host discards the Core and rebuilds.
 */
export declare const CORE_BROKEN: 'core_broken';

export { ErrorCode, ERROR_CODES, codeForStatus } from './errcodes';

export declare class AgentsyncError extends Error {
  /** One of ErrorCode; an error frame's code as the server sent it. */
  code: ErrorCode | (string & {});
  detail: string;
  /** HTTP status, for errors of the REST API. */
  status?: number;
  /** Whether trying the same thing again later may succeed (network, rate_limited, closed, timeout, internal). */
  retryable: boolean;
  /** For code 'network': the transport's own error (fetch's TypeError). */
  cause?: unknown;
}

export declare class Session {
  readonly sessionId: string;
  /** The core's status, or 'cached' while a cached window is shown before the core starts. */
  readonly status: Status | 'cached';
  /** Not live because the server cannot be reached (no answer, or a gateway's 502/504). */
  readonly offline: boolean;
  /** The sends not committed yet, in order (with a cache or an outbox). */
  readonly outbox: OutboxEntry[];
  /** Posts a failed send again under its idempotency key; resolves with the committed message. */
  retrySend(id: string): Promise<Message>;
  /** Drops a failed or queued send; resolves whether one was dropped. */
  discardSend(id: string): Promise<boolean>;
  /** Drops every send not being posted. */
  clearOutbox(): Promise<void>;
  /** Removes every cached window and outbox of the cache's store (a sign-out). */
  clearCache(): Promise<void>;
  /**
   * Why the session is not live: the last failure to connect or read, null
   * while live; after a final not_found or unauthorized, what closed it.
   */
  readonly cause: AgentsyncError | null;
  /**
   * Connects now if the session waits to reconnect (status 'backoff')
   * instead of at the end of its backoff; returns whether it did. Called
   * by the session itself when a browser goes back online.
   */
  reconnect(): boolean;
  /** How many times the core was discarded and rebuilt after a trap or a `core_broken` error. */
  readonly rebuilds: number;
  /** The current view (always up to date when read). */
  readonly view: LocalView;
  /** Called now and after every change, coalesced. Returns the unsubscribe function. */
  subscribe(listener: (view: LocalView) => void): () => void;
  /**
   * Warms the session's WebAssembly core for a long answer while the app is
   * idle: a synthetic answer (1 MiB unless `bytes` says) streams through a
   * scratch client of the core's instance, awaiting `pause` (a macrotask
   * unless given) between WebSocket-message-sized slices. Resolves when
   * done, at once when the instance is warm already.
   */
  warm(opts?: WarmOptions): Promise<void>;
  /**
   * The first view (the current one included) for which predicate is true.
   * Rejects with code 'timeout' after timeoutMs (default 30000, 0 = never),
   * 'closed' when the session closes.
   */
  waitFor(predicate: (view: View) => boolean, opts?: { timeoutMs?: number }): Promise<View>;
  on(type: 'status', fn: (e: StatusEvent) => void): () => void;
  on(type: 'error', fn: (e: AgentsyncError) => void): () => void;
  on(type: 'rebuild', fn: (e: { reason: unknown }) => void): () => void;
  /** What changed, in order, before the listeners run (protocol §7.4). */
  on(type: 'change', fn: (e: ViewChange) => void): () => void;
  /**
   * A position of this session's path gained or lost an alternative (a
   * fork made or deleted anywhere in the conversation, on any node): it now
   * has `count` and the path takes the `index`-th (protocol §4.6).
   */
  on(type: 'alternatives', fn: (e: BranchCount) => void): () => void;
  /**
   * Who follows the session now (every subscription that asked for
   * signals, per principal, across nodes) and who is typing (protocol
   * §4.6); the same list is in `session.presence`.
   */
  on(type: 'presence', fn: (viewers: Viewer[]) => void): () => void;
  /** The last presence signal's viewers ([] until one came). */
  readonly presence: Viewer[];
  /**
   * Tells the other viewers this principal is typing (or stopped); it lapses
   * on the server about 6 s after it was last said.
   */
  typing(typing?: boolean): Promise<void>;
  /** Reads one page straight from the server. */
  messages(params?: { limit?: number; before_sequence?: number; include_internal?: boolean }): Promise<MessagePage>;
  /**
   * The page around a sequence (a search hit), or after one: with
   * `has_newer` and `next_after_sequence` (pass as after_sequence) for the
   * newer side. At most one of before/around/after.
   */
  messages(params: { limit?: number; around_sequence?: number; after_sequence?: number; include_internal?: boolean }): Promise<WindowPage>;
  /** Loads older pages until the view holds the message at sequence (or the next visible one); resolves with it, or null. */
  reveal(sequence: number, opts?: { timeoutMs?: number }): Promise<Message | null>;
  /** Loads the next older page into the view; rejects if that page fails. Safe to call from a listener. */
  loadOlder(): Promise<void>;
  setIncludeInternal(on: boolean): Promise<void>;
  /** Hex SHA-256 of the view's canonical encoding: the same on every host. */
  digest(): string;
  /**
   * Posts a user message. Idempotent and retried: every attempt carries the
   * same Idempotency-Key; a network failure, 503 or 429 is retried (after
   * Retry-After, else a backoff from 250 ms). Any other error rejects at once.
   */
  send(parts: string | UserPart[], opts?: SendOptions): Promise<Message>;
  /** Answers a pending interaction given as its part: the response its request's kind takes. */
  answer(interaction: ApprovalInteraction, response: ApprovalResponse): Promise<Message>;
  answer(interaction: QuestionInteraction, response: QuestionResponse): Promise<Message>;
  /** Answers a pending interaction named by its id. */
  answer(interactionId: string, response: ApprovalResponse | QuestionResponse): Promise<Message>;
  /** Runs a session action (ActionStop, ActionSetModel with a model, ActionSetApprovalMode with a mode, ActionRetry). */
  action(type: ActionType | (string & {}), value?: string): Promise<Message>;
  /**
   * Runs the last turn again after it ended with a recoverable error (the
   * retry action); rejects with code conflict when there is nothing to
   * retry. Resolves with the internal user message that restarts the turn.
   */
  retry(): Promise<Message>;
  /** Sets the session's title; resolves with the session as the server now has it. */
  rename(title: string): Promise<SessionInfo>;
  /** Deletes the session and its messages on the server, then closes this Session. */
  delete(): Promise<void>;
  /**
   * Forks the session before beforeSequence (2..head+1; every message before
   * it done): a new session of the same conversation sharing this one's
   * first messages. `parts` post its first own message (an edit),
   * `regenerate` runs the turn of the prefix's last user message again.
   * Resolves with the new session; this one stays on its path.
   */
  fork(beforeSequence: number, opts?: { parts?: string | UserPart[]; regenerate?: boolean }): Promise<SessionInfo>;
  /** Edits the user message at sequence, keeping the original (a fork with the new parts). */
  edit(sequence: number, parts: string | UserPart[]): Promise<SessionInfo>;
  /** Answers the reply at sequence again, keeping the original (a fork that regenerates). */
  regenerate(sequence: number): Promise<SessionInfo>;
  /** The alternatives at position sequence of this session's path. */
  branches(sequence: number): Promise<BranchList>;
  /** The positions of this path (from..to, default all) with more than one alternative. */
  alternatives(params?: { from?: number; to?: number }): Promise<BranchCount[]>;
  /**
   * Connects to another session of the conversation with this one's options
   * (one page and a subscription), then closes this one.
   */
  switchBranch(sessionId: string, opts?: Partial<ConnectOptions>): Promise<Session>;
  /** Test hook: closes the socket as a network failure would. Returns false if none was open. */
  dropConnection(): boolean;
  close(): void;
}

export interface SendOptions {
  visibility?: Visibility;
  /**
   * The post's Idempotency-Key (a non-empty string, at most 255 bytes): a
   * post whose key the session already has answers the message the first
   * one committed and posts nothing. Default: a new random key per call.
   * Pass your own (kept, say, in sessionStorage) to retry across a reload.
   */
  idempotencyKey?: string;
  /** Retries after a network failure, 503 or 429; default 3, 0 for none. */
  retries?: number;
  /**
   * What a message sent while a turn runs does: 'steer' (the default: the
   * running turn reads it at its next step), 'queue' (a turn of its own
   * answers it once the running one ends; it shows as queued, with a
   * data part of data_type 'agentsync.delivery'), or 'interrupt' (the
   * running turn stops, then a new one answers it). Ignored when no turn
   * runs.
   */
  delivery?: Delivery;
}

export declare function connect(opts: ConnectOptions): Promise<Session>;
/** One render's worth of changes: see Session.on('change'). */
export interface ViewChange {
  /** Every message is new: render the list again. */
  reset: boolean;
  messages: MessageChange[];
}

export interface MessageChange {
  message_id: string;
  /**
   * The message as it is now (a new object). A message taken whole after
   * a commit keeps the texts the host held: a part whose text did not
   * change has the very same string (compare with ===, at no cost).
   */
  message: Message;
  /** The parts that changed; every other part keeps its object. */
  parts: PartChange[];
}

export interface PartChange {
  index: number;
  part: Part;
  /** Set when the part only grew: the text appended (part.text ends with it). */
  appended?: string;
}

/** Loads the module, then creates a session on the server and connects to it. */
export declare function createSession(url: string, opts?: Omit<ConnectOptions, 'url' | 'sessionId'> & { model?: string }): Promise<Session>;

// BEGIN httpwire: generated by tools/genwire from package httpwire (go generate ./js). DO NOT EDIT.
/**
 * ActionRequest is the body of POST /v1/sessions/{id}/actions. The answer
 * is the message holding the action part.
 */
export interface ActionRequest {
  action_type: ActionType;
  value?: string;
}

/**
 * ActionType names a session operation of POST /v1/sessions/{id}/actions.
 * Each constant is named as the wire names its value.
 */
export type ActionType = 'stop' | 'set_model' | 'set_approval_mode' | 'retry';

/**
 * AlternativeList is the answer of GET
 * /v1/sessions/{id}/alternatives?from=&to=: the positions of the range
 * (default: the whole path, 1..head+1) that have more than one
 * alternative, oldest first. A UI reads it once per switch to draw every
 * arrow of a long path without reading its pages.
 */
export interface AlternativeList {
  items: BranchCount[];
}

/**
 * AnswerRequest is the body of POST
 * /v1/sessions/{id}/interactions/{interaction_id}. The answer is the agent
 * message holding the interaction.
 */
export interface AnswerRequest {
  response: ApprovalResponse | QuestionResponse;
}

/**
 * ApprovalMode says which tool calls wait for the user's approval
 * (Session.ApprovalMode, the value of ActionSetApprovalMode).
 */
export type ApprovalMode = 'ask' | 'auto';

/** Author is the data of an author part (DataTypeAuthor). */
export interface Author {
  principal?: string;
  share_id?: string;
}

/**
 * Branch is one alternative at a position of a session's path: the
 * session to switch to for it (the asked session for the one its own path
 * takes) and its message at that position, which carries that session's
 * id; no message for a fork with nothing at the position yet.
 */
export interface Branch {
  session_id: string;
  /**
   * Index is the alternative's place, 0-based, in the order they were
   * made: a UI shows ‹ Index+1 / len(items) ›.
   */
  index: number;
  message?: Message;
}

/**
 * BranchCount is one entry of a page's "branches" (beside its items,
 * never inside a message): position Sequence of the path has Count
 * alternatives and the path takes the one at Index (0-based). Positions
 * with one alternative are left out.
 */
export interface BranchCount {
  sequence: number;
  count: number;
  index: number;
}

/**
 * BranchList is the answer of GET /v1/sessions/{id}/branches?sequence=N:
 * the alternatives at position Sequence of the session's path (the
 * sessions of its conversation that share the path before it and differ
 * at it, this one included), and which of them this session's path takes.
 */
export interface BranchList {
  sequence: number;
  index: number;
  items: Branch[];
}

/** CreateSessionRequest is the (optional) body of POST /v1/sessions. */
export interface CreateSessionRequest {
  /** Model names the session's model; empty is the server's default. */
  model?: string;
}

/** CreateShareRequest is the body of POST /v1/sessions/{id}/shares. */
export interface CreateShareRequest {
  /** Mode is ShareRead (empty: the default) or ShareWrite. */
  mode?: string;
  /**
   * IncludeForks lets the link read the other sessions of the
   * conversation (its forks, their parents) too.
   */
  include_forks?: boolean;
  /** ExpiresAt (Unix ms, in the future) ends the link; 0: never. */
  expires_at?: number;
}

/**
 * Delivery is how a message sent while a turn runs is answered
 * (PostMessageRequest.Delivery).
 */
export type Delivery = 'steer' | 'queue' | 'interrupt';

/**
 * ForkRequest is the body of POST /v1/sessions/{id}/fork: a new session of
 * the same conversation whose first BeforeSequence-1 messages are this
 * one's (shared, never copied). BeforeSequence is 2..head+1, and every
 * message before it must be done (409 conflict otherwise). With Parts the
 * fork's first own message is that user message (an edit of the message
 * at BeforeSequence) and its turn starts; with Regenerate the turn of the
 * prefix's last user message runs again (a new reply at BeforeSequence);
 * with neither it is "fork from here". The answer (201) is the new
 * Session, naming ParentSessionID, ForkSequence and RootSessionID.
 */
export interface ForkRequest {
  before_sequence: number;
  parts?: Part[];
  regenerate?: boolean;
}

/** InteractionKind is what an interaction asks (InteractionRequest.Kind). */
export type InteractionKind = 'approval' | 'question';

/** Member is one member of a session as the API answers it. */
export interface Member {
  principal: string;
  role: string;
  created_at?: number;
}

/**
 * PostMessageRequest is the body of POST /v1/sessions/{id}/messages: a user
 * message. An Idempotency-Key header (at most 255 bytes) makes it safe to
 * retry. The answer is the message as stored.
 */
export interface PostMessageRequest {
  parts: Part[];
  /** Visibility is "visible" when empty. */
  visibility?: Visibility;
  /**
   * Delivery says what a message sent while a turn runs does (ignored
   * when none runs): DeliverySteer (empty: the default) joins the running
   * turn, whose next step reads it; DeliveryQueue answers it in a turn
   * of its own once the running one ends; DeliveryInterrupt stops the
   * running turn and then answers it.
   */
  delivery?: Delivery;
}

/** PutMemberRequest is the body of PUT /v1/sessions/{id}/members/{principal}. */
export interface PutMemberRequest {
  /** RoleEditor or RoleViewer */
  role: string;
}

/**
 * RenameSessionRequest is the body of PATCH /v1/sessions/{id}. Title is
 * required and not empty (a nil Title is a missing one); the server trims
 * it, and refuses one over 120 characters.
 */
export interface RenameSessionRequest {
  title: string;
}

/**
 * SearchHit is one message found by GET /v1/search: the session whose
 * messages hold it (for a fork's shared prefix, the session it was written
 * in), its sequence and id there (open the session with
 * ?around_sequence=Sequence), and a snippet of its text. Snippet is an
 * HTML fragment: the text escaped (&, <, >, ", '), each matching word in
 * <mark>...</mark>, nothing else; a plain-text client drops the two tags
 * and unescapes the rest.
 */
export interface SearchHit {
  session_id: string;
  message_id: string;
  sequence: number;
  role: string;
  created_at: number;
  snippet: string;
  /** Title is the session's title when the hit was read. */
  title: string;
}

/**
 * SearchResults is the answer of GET /v1/search?q=&limit=&cursor=: hits
 * newest first; NextCursor, when more remain, is the cursor of the next
 * page (an opaque string).
 */
export interface SearchResults {
  items: SearchHit[];
  next_cursor?: string;
}

/**
 * Session is one session as the server shows it: in GET /v1/sessions, and
 * as the answer of POST /v1/sessions and PATCH /v1/sessions/{id}.
 */
export interface SessionInfo {
  session_id: string;
  /** Model is the name of the session's model. */
  model: string;
  /** ApprovalMode is "ask" or "auto" (ApprovalAsk, ApprovalAuto). */
  approval_mode?: ApprovalMode;
  /** CreatedAt is in Unix milliseconds. */
  created_at: number;
  /** UpdatedAt is in Unix milliseconds. */
  updated_at?: number;
  /** HeadSequence is the sequence of the session's newest message. */
  head_sequence: number;
  /**
   * Title is "" until the first visible user message is committed, then
   * that message's text, shortened; RenameSession sets it.
   */
  title: string;
  /**
   * Actions are the action types the server accepts for the session (a
   * UI shows Retry only when it holds ActionRetry).
   */
  actions: ActionType[];
  /** Models are the model names ActionSetModel takes, the default first. */
  models: string[];
  /**
   * RootSessionID is the session's conversation: the root of its tree
   * of forks (a root's own id). A sidebar groups sessions by it.
   */
  root_session_id?: string;
  /**
   * Running is true while a turn runs in the session, as the serving
   * node heard (GET /v1/sessions and the live session list).
   */
  running?: boolean;
  /**
   * ParentSessionID is the session a fork was made from (it may have
   * been deleted since); empty for a root.
   */
  parent_session_id?: string;
  /**
   * ForkSequence is the sequence a fork was made before: its messages
   * 1..ForkSequence-1 are its parent's. 0 for a root.
   */
  fork_sequence?: number;
}

/** SessionList is the answer of GET /v1/sessions: newest first. */
export interface SessionList {
  items: SessionInfo[];
}

/**
 * Share is one share link as the API answers it; Token only in the
 * answer to its creation (the server keeps only its hash).
 */
export interface Share {
  share_id: string;
  session_id: string;
  mode: string;
  include_forks: boolean;
  expires_at?: number;
  created_at: number;
  token?: string;
}

/**
 * TypingRequest is the body of POST /v1/sessions/{id}/typing: the caller's
 * principal is typing in the session (true) or stopped (false). Typing
 * lapses a few seconds after it was last said (docs/protocol.md §4.6).
 */
export interface TypingRequest {
  typing: boolean;
}

/**
 * Viewer is one principal in a presence signal (§4.6): its open
 * subscriptions of the session, across nodes, and whether it is typing.
 */
export interface Viewer {
  principal: string;
  connections: number;
  typing: boolean;
}

// END httpwire

/**
 * Follows the principal's session list live (GET /v1/sessions/subscribe,
 * protocol §4.7): onList gets the whole list, newest activity first, at
 * once and after every change anywhere; reconnects by itself. Returns stop.
 */
export function watchSessions(
  url: string,
  opts: { token?: string; WebSocket?: typeof WebSocket },
  onList: (sessions: SessionInfo[]) => void,
): () => void;

/** The server's sessions, newest first (GET /v1/sessions). */
export declare function listSessions(url: string, opts?: { token?: TokenOption; fetch?: typeof fetch; limit?: number }): Promise<SessionInfo[]>;
/**
 * Searches the caller's sessions (GET /v1/search): messages holding every
 * word of q, newest first, with an HTML snippet (matches in <mark>, the
 * rest escaped). Open a hit with connect() and session.reveal(sequence).
 */
export declare function search(url: string, q: string, opts?: { token?: TokenOption; fetch?: typeof fetch; limit?: number; cursor?: string }): Promise<SearchResults>;

/** Sets a session's title without connecting to it (PATCH /v1/sessions/{id}). */
export declare function renameSession(url: string, sessionId: string, title: string, opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<SessionInfo>;

/** Deletes a session and its messages without connecting to it (DELETE /v1/sessions/{id}). */
export declare function deleteSession(url: string, sessionId: string, opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<void>;

/** Makes a share link of a session (owner only); the answer's token opens it as connect()'s token. */
export declare function createShare(url: string, sessionId: string, share?: CreateShareRequest, opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<Share>;

/** Lists a session's share links, without tokens (owner only). */
export declare function listShares(url: string, sessionId: string, opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<Share[]>;

/** Revokes a share link: its subscriptions end (error frame `revoked`), its token is refused. */
export declare function revokeShare(url: string, sessionId: string, shareId: string, opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<void>;

/** Lists a session's owner (first) and members. */
export declare function listMembers(url: string, sessionId: string, opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<Member[]>;

/** Adds a member as 'editor' or 'viewer', or changes its role (owner only). */
export declare function setMember(url: string, sessionId: string, principal: string, role: 'editor' | 'viewer', opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<Member>;

/** Removes a member: its subscriptions end (error frame `revoked`). */
export declare function removeMember(url: string, sessionId: string, principal: string, opts?: { token?: TokenOption; fetch?: typeof fetch }): Promise<void>;

/** Who wrote a user message: {principal} for a member, {share_id} for a write link, null for the owner. */
export declare function messageAuthor(message: { parts?: ReadonlyArray<{ type: string; data_type?: string; data?: unknown }> }): Author | null;

export interface Command {
  type: 'open_subscription' | 'close_subscription' | 'fetch_page' | 'set_timer' | 'render' | 'status';
  session_id?: string;
  request_id?: number;
  limit?: number;
  before_sequence?: number;
  include_internal?: boolean;
  timer_id?: number;
  delay_ms?: number;
  message_ids?: string[];
  reset?: boolean;
  status?: Status;
  reason?: string;
}

/** The events a host feeds the core (docs/protocol.md §7.2). */
export type CoreEventType =
  | 'start' | 'subscription_opened' | 'frames' | 'page' | 'page_failed'
  | 'connection_lost' | 'timer_fired' | 'load_older' | 'set_include_internal' | 'close';

export interface CoreEvent {
  type: CoreEventType;
  session_id?: string;
  page_limit?: number;
  include_internal?: boolean;
  data?: Uint8Array;
  request_id?: number;
  error?: string;
  jitter?: number;
  timer_id?: number;
}

/** One module instance holding one synccore client (ABI version 4). */
export declare class Core {
  static load(source?: WasmSource, opts?: { stdout?: (line: string) => void; stderr?: (line: string) => void }): Promise<Core>;
  /**
   * True after a trap or a `core_broken` error (a panic the module
   * recovered): discard this Core and rebuild. Any other error code,
   * `internal` from a server's error frame included, leaves it false.
   */
  readonly broken: boolean;
  handle(event: CoreEvent): { commands: Command[]; error?: { code: string; message: string } };
  handleBytes(event: Uint8Array): { commands: Command[]; error?: { code: string; message: string } };
  /** One WebSocket binary message, encoded straight into wasm memory. */
  handleFrames(data: Uint8Array | ArrayBuffer): { commands: Command[]; error?: { code: string; message: string } };
  /**
   * handleFrames and the changes it made in one call (ABI v3, protocol
   * §7.4.1): `changes` is a Changes map, or the appends form (the scalars
   * and a flat `appends` list [message_id, index, text, ...]), or null
   * when the core broke.
   */
  handleChanges(data: Uint8Array | ArrayBuffer): {
    out: { commands: Command[]; error?: { code: string; message: string } };
    changes: Record<string, unknown> | null;
  };
  /**
   * handleChanges through agentsync_handle_compact (ABI v4, protocol
   * §7.4.2): returns `COMPACT` when the delta's take came in the result
   * alone (`compactText` appended to part `compactIndex` of message
   * `compactId`), else what handleChanges returns.
   */
  handleCompact(data: Uint8Array | ArrayBuffer): typeof COMPACT | ReturnType<Core['handleChanges']>;
  /** The message a compact answer appends to: the only append of the last take, or null. */
  compactId: string | null;
  compactIndex: number;
  compactText: string;
  view(): View & { digest: string };
  message(id: string): Message | null;
  digest(): string;
  /** Drops the client; the instance may serve the next Core.load of its module. */
  free(): void;
  /** Session.warm on this Core's instance; this Core may be used meanwhile. */
  warm(opts?: WarmOptions): Promise<void>;
}

/** How Session.warm and Core.warm stream their synthetic answer. */
export interface WarmOptions {
  /** The answer's length in bytes (default 1 MiB). */
  bytes?: number;
  /** Awaited between two slices (default: the next macrotask). */
  pause?: () => Promise<void>;
}

/** Core.handleCompact's answer for a delta taken in the result alone. */
export declare const COMPACT: { readonly compact: true };

export declare function loadModule(source: WasmSource): Promise<WebAssembly.Module>;
export declare function encode(value: unknown): Uint8Array;
export declare function decode(bytes: Uint8Array | ArrayBuffer): unknown;
