// TypeScript declarations of the agentsync JavaScript host. The shapes are
// those of docs/protocol.md and synccore/{model,io}.go: snake_case keys.

import type { ErrorCode } from './errcodes';

export type Role = 'user' | 'agent';
export type MessageState = 'streaming' | 'done';
export type Visibility = 'visible' | 'internal';
export type PartType = 'text' | 'reasoning' | 'context' | 'file' | 'data' | 'tool' | 'interaction' | 'action' | 'error';
export type Status = 'idle' | 'connecting' | 'syncing' | 'live' | 'backoff' | 'closed';

export interface Part {
  part_id: string;
  sequence: number;
  type: PartType;
  step_id?: string;
  /** streaming/done for text and reasoning; a tool state for tools; an action state for actions. */
  state?: string;
  text?: string;
  tag?: string;
  context?: string;
  url?: string;
  media_type?: string;
  filename?: string;
  data_type?: string;
  data?: unknown;
  data_id?: string;
  tool_call_id?: string;
  tool_name?: string;
  input?: unknown;
  output?: unknown;
  interaction_id?: string;
  status?: 'pending' | 'resolved' | 'cancelled';
  request?: unknown;
  response?: unknown;
  action_id?: string;
  action_type?: string;
  title?: string;
  scope?: 'step' | 'turn' | 'session';
  code?: string;
  message?: string;
  recoverable?: boolean;
}

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

/** What a UI renders. Unchanged messages keep their identity from one view to the next. */
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

export interface UserPart {
  type: 'text' | 'context' | 'file' | 'data';
  text?: string;
  tag?: string;
  context?: string;
  url?: string;
  media_type?: string;
  filename?: string;
  data_type?: string;
  data?: unknown;
  data_id?: string;
}

export type WasmSource = string | URL | Uint8Array | ArrayBuffer | WebAssembly.Module;

export interface ConnectOptions {
  /** The server's base URL, e.g. "http://127.0.0.1:8080". */
  url: string;
  sessionId: string;
  /** Bearer token (sent as ?token= on the WebSocket, which cannot carry headers in browsers). */
  token?: string;
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
}

export interface StatusEvent {
  status: Status;
  reason: string;
}

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
}

export declare class Session {
  readonly sessionId: string;
  readonly status: Status;
  /** How many times the core was discarded and rebuilt after a trap or a `core_broken` error. */
  readonly rebuilds: number;
  /** The current view (always up to date when read). */
  readonly view: View;
  /** Called now and after every change, coalesced. Returns the unsubscribe function. */
  subscribe(listener: (view: View) => void): () => void;
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
  /** Reads one page straight from the server. */
  messages(params?: { limit?: number; before_sequence?: number; include_internal?: boolean }): Promise<MessagePage>;
  /** Loads the next older page into the view; rejects if that page fails. Safe to call from a listener. */
  loadOlder(): Promise<void>;
  setIncludeInternal(on: boolean): Promise<void>;
  /** Hex SHA-256 of the view's canonical encoding: the same on every host. */
  digest(): string;
  send(parts: string | UserPart[], opts?: { visibility?: Visibility }): Promise<Message>;
  answer(interactionId: string, response: { approved: boolean } | { answer: string } | unknown): Promise<Message>;
  action(type: 'stop' | 'set_model' | 'set_approval_mode' | string, value?: string): Promise<Message>;
  /** Test hook: closes the socket as a network failure would. Returns false if none was open. */
  dropConnection(): boolean;
  close(): void;
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
  /** The message as it is now (a new object). */
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

export declare function createSession(url: string, opts?: Omit<ConnectOptions, 'url' | 'sessionId'> & { model?: string }): Promise<Session>;

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

export interface CoreEvent {
  type: string;
  session_id?: string;
  page_limit?: number;
  include_internal?: boolean;
  data?: Uint8Array;
  request_id?: number;
  error?: string;
  jitter?: number;
  timer_id?: number;
}

/** One module instance holding one synccore client (ABI version 1). */
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
  view(): View & { digest: string };
  message(id: string): Message | null;
  digest(): string;
  free(): void;
}

export declare function loadModule(source: WasmSource): Promise<WebAssembly.Module>;
export declare function encode(value: unknown): Uint8Array;
export declare function decode(bytes: Uint8Array | ArrayBuffer): unknown;
