// The bridge to the Vercel AI SDK: an agentsync view as AI SDK UIMessage[],
// so components built for useChat (AI Elements, assistant-ui...) render an
// agentsync session unchanged. The reference server's /v1/chat endpoint
// (server/internal/api/aisdk.go, uistream.go) streams the same messages in the UI
// message stream protocol: a message read through useChat equals
// toUIMessages of the view.
//
// Mapping (docs/ai-sdk.md has the table):
//   text, reasoning          -> text, reasoning (state streaming/done)
//   file                     -> file
//   data                     -> data-<data_type> (id = data_id)
//   tool                     -> tool-<tool_name>, its state in the AI SDK's
//                               names; an approval interaction becomes the
//                               tool's `approval`
//   question interaction     -> data-agentsync-question
//   action, error, context   -> data-agentsync-action / -error / -context

import { ActionStop } from './constants.js';
import { AgentsyncError } from './errors.js';

/**
 * @param {import('./index.js').View | {messages: import('./index.js').Message[]}} view
 * @returns {import('./ai.js').AgentsyncUIMessage[]}
 */
export function toUIMessages(view) {
  return view.messages.map(toUIMessage);
}

// UIMessages by message object: a Session keeps an unchanged message's
// object from one view to the next, so its UIMessage keeps its identity
// too and memoized rows skip it.
const converted = new WeakMap();

/** One message as a UIMessage (id = message_id); the same object for the same message object. */
export function toUIMessage(message) {
  let ui = converted.get(message);
  if (!ui) {
    ui = convert(message);
    converted.set(message, ui);
  }
  return ui;
}

function convert(message) {
  const approvals = new Map(); // tool_call_id -> approval interaction
  for (const p of message.parts) {
    if (p.type === 'interaction' && p.request?.kind === 'approval') approvals.set(p.request.tool_call_id, p);
  }
  const parts = [];
  for (const p of message.parts) {
    const ui = toUIPart(p, approvals);
    if (ui) parts.push(ui);
  }
  return { id: message.message_id, role: message.role === 'user' ? 'user' : 'assistant', parts };
}

function toUIPart(p, approvals) {
  switch (p.type) {
    case 'text':
      return p.state ? { type: 'text', text: p.text ?? '', state: p.state } : { type: 'text', text: p.text ?? '' };
    case 'reasoning':
      return { type: 'reasoning', id: p.part_id, text: p.text ?? '', state: p.state };
    case 'file':
      return withOptional({ type: 'file', mediaType: p.media_type, url: p.url }, 'filename', p.filename);
    case 'data':
      return withOptional({ type: `data-${p.data_type}` }, 'id', p.data_id, { data: p.data ?? null });
    case 'tool':
      return toolPart(p, approvals.get(p.tool_call_id));
    case 'interaction':
      if (p.request?.kind === 'approval') return null; // the tool's `approval`
      return {
        type: 'data-agentsync-question',
        id: p.interaction_id,
        data: withOptional({ question: p.request?.question ?? '', tool_call_id: p.request?.tool_call_id ?? '', status: p.status }, 'answer', p.response?.answer),
      };
    case 'action':
      return { type: 'data-agentsync-action', id: p.action_id, data: withOptional({ action_type: p.action_type, state: p.state }, 'title', p.title) };
    case 'error':
      return { type: 'data-agentsync-error', id: p.part_id, data: { scope: p.scope, code: p.code, message: p.message, recoverable: !!p.recoverable } };
    case 'context':
      return { type: 'data-agentsync-context', id: p.part_id, data: withOptional({ context: p.context ?? '' }, 'tag', p.tag) };
    default:
      return null;
  }
}

// A tool call in the AI SDK's states. agentsync's `running` has no name
// there: it is `approval-responded` after an approval, else `input-available`.
function toolPart(p, approval) {
  const part = { type: `tool-${p.tool_name}`, toolCallId: p.tool_call_id };
  const resolved = approval?.status === 'resolved' ? approval.response?.approved === true : undefined;
  const decided = (approved) => ({ id: approval.interaction_id, approved });
  switch (p.state) {
    case 'input-streaming':
      return withOptional({ ...part, state: 'input-streaming' }, 'input', p.input);
    case 'awaiting-approval':
      return { ...part, state: 'approval-requested', input: p.input ?? null, approval: { id: approval?.interaction_id ?? '' } };
    case 'input-available':
    case 'running':
      if (approval && resolved !== undefined) return { ...part, state: 'approval-responded', input: p.input ?? null, approval: decided(resolved) };
      return { ...part, state: 'input-available', input: p.input ?? null };
    case 'output-available':
      return withApproval({ ...part, state: 'output-available', input: p.input ?? null, output: p.output ?? null }, approval, resolved);
    case 'output-error':
      return withApproval({ ...part, state: 'output-error', input: p.input ?? null, errorText: errorText(p.output) }, approval, resolved);
    case 'output-denied':
      return { ...part, state: 'output-denied', input: p.input ?? null, approval: { id: approval?.interaction_id ?? '', approved: false } };
    default:
      return { ...part, state: 'input-available', input: p.input ?? null };
  }
}

function withApproval(part, approval, resolved) {
  if (approval && resolved !== undefined) part.approval = { id: approval.interaction_id, approved: resolved };
  return part;
}

/** The text of a failed tool's output: its `error` field, or the output as JSON. */
export function errorText(output) {
  if (output && typeof output === 'object' && typeof output.error === 'string') return output.error;
  if (typeof output === 'string') return output;
  return output === undefined ? 'tool failed' : JSON.stringify(output);
}

// Sets key only when value is present, so parts carry no undefined fields
// (a UIMessage is persisted as JSON).
function withOptional(obj, key, value, rest) {
  if (value !== undefined && value !== null && value !== '') obj[key] = value;
  return rest ? Object.assign(obj, rest) : obj;
}

/**
 * Makes useChat's stop() stop the agent on the server, for the reference
 * server's /v1/chat. useChat's stop() only aborts the request it has under
 * way (the POST, or the GET of a resumed stream); the server cannot tell
 * that abort from a reload or a lost network, and must not stop a
 * resumable turn on those. This wraps a ChatTransport (DefaultChatTransport
 * on `${server}/v1/chat`) so that an abort of a request, and only an abort,
 * also sends the session's stop: POST {api}/{chatId}/stop with the
 * message_id the stream started, which stops that turn (on whichever node
 * serves the session) and nothing later. An abort followed at once by
 * another request of the same chat (useChat replacing a resumed stream by
 * a new one) is not a stop.
 *
 *   const transport = withServerStop(new DefaultChatTransport({ api }), { api });
 *   useChat({ id: sessionId, resume: true, transport });
 *
 * @template T
 * @param {T} transport a ChatTransport (sendMessages, reconnectToStream)
 * @param {{api: string, headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>), fetch?: typeof fetch}} opts
 *   api: the chat endpoint, e.g. 'http://127.0.0.1:8080/v1/chat';
 *   headers: sent with the stop (a bearer token, say)
 * @returns {T}
 */
export function withServerStop(transport, { api, headers, fetch: fetchImpl } = {}) {
  if (typeof api !== 'string' || api === '') throw new TypeError('withServerStop: opts.api (the /v1/chat URL) is required');
  const base = api.replace(/\/+$/, '');
  const requests = new Map(); // chatId -> how many requests it has made
  const stop = async (chatId, messageId) => {
    const h = typeof headers === 'function' ? await headers() : headers;
    const body = messageId ? JSON.stringify({ message_id: messageId }) : undefined;
    const f = fetchImpl ?? globalThis.fetch;
    await f(`${base}/${encodeURIComponent(chatId)}/stop`, {
      method: 'POST',
      headers: { ...h, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body,
    });
  };
  // Watches one request: the message its stream starts, and its abort.
  const watch = (chatId, abortSignal) => {
    const n = (requests.get(chatId) ?? 0) + 1;
    requests.set(chatId, n);
    const seen = { messageId: undefined };
    abortSignal?.addEventListener(
      'abort',
      () => {
        // A request that replaces this one starts in the same task.
        setTimeout(() => {
          if (requests.get(chatId) !== n) return;
          stop(chatId, seen.messageId).catch(() => {});
        }, 0);
      },
      { once: true },
    );
    return (stream) =>
      stream &&
      stream.pipeThrough(
        new TransformStream({
          transform(chunk, controller) {
            if (chunk?.type === 'start' && typeof chunk.messageId === 'string') seen.messageId = chunk.messageId;
            controller.enqueue(chunk);
          },
        }),
      );
  };
  return {
    ...transport,
    // The prototype's own fields (resumeStreamIsReplay) as the chat reads them.
    get resumeStreamIsReplay() {
      return transport.resumeStreamIsReplay;
    },
    async sendMessages(options) {
      const tap = watch(options.chatId, options.abortSignal);
      return tap(await transport.sendMessages(options));
    },
    async reconnectToStream(options) {
      const tap = watch(options.chatId, options.abortSignal);
      return tap(await transport.reconnectToStream(options));
    },
  };
}

// ------------------------------------------------------------ the transport

// AgentsyncChatTransport: the AI SDK's ChatTransport (what useChat and its
// Chat classes call) on the kit's own sync instead of server-sent events.
// A message is posted as the kit posts one (POST .../messages, the new
// user message only, idempotent); the reply's UI message stream is derived
// from the synced view of the session (the module and its WebSocket,
// exact through reconnects and resyncs), so what useChat builds equals
// toUIMessage of the same message. A regeneration or an edit is a fork of
// the conversation tree, which the transport then follows (switchBranch).
// docs/ai-sdk.md §3 has the guide.

/**
 * The session's history as UIMessages, for useChat({messages}) after a
 * reload: one page (GET /v1/sessions/{id}/messages), newest messages,
 * oldest first. `before` is the cursor of the next older page (pass it
 * back as opts.before), absent when there is none. A reply still streaming
 * is included as it is now; resumeStream() then replaces it with the whole
 * reply, from its start (the transport's resumed stream is a replay).
 * @param {import('./index.js').Session} session
 * @param {{limit?: number, before?: number}} [opts]
 */
export async function loadUIMessages(session, { limit = 50, before } = {}) {
  const params = { limit };
  if (before !== undefined) params.before_sequence = before;
  const page = await session.messages(params);
  const sequences = new Map(page.items.map((m) => [m.message_id, m.sequence]));
  const branches = (page.branches ?? []).map((b) => ({ ...b, messageId: page.items.find((m) => m.sequence === b.sequence)?.message_id }));
  return {
    messages: toUIMessages({ messages: page.items }),
    hasMore: !!page.has_more,
    before: page.has_more ? page.next_before_sequence : undefined,
    /** Each message's sequence (its position in the session's path), by UIMessage id. */
    sequences,
    /** The positions of the page with more than one version: {sequence, count, index, messageId}. */
    branches,
  };
}

/** A ChatTransport for useChat on an agentsync session, synced by the kit. */
export class AgentsyncChatTransport {
  /**
   * @param {{session: import('./index.js').Session, onSessionChange?: (session: import('./index.js').Session) => void, stopOnAbort?: boolean}} opts
   *   session: a connected Session (connect or createSession); the chat
   *   follows it, and after a regeneration or an edit the fork it made;
   *   onSessionChange: told the new Session after such a switch (the old
   *   one is closed);
   *   stopOnAbort: whether an abort of a request (useChat's stop()) stops
   *   the turn on the server (default true).
   */
  constructor({ session, onSessionChange, stopOnAbort = true } = {}) {
    if (!session || typeof session.send !== 'function') throw new TypeError('AgentsyncChatTransport: opts.session (a connected Session) is required');
    this.session = session;
    // useChat's id: a regenerate or an edit moves the transport to a fork,
    // and an id that followed it would make useChat start a new Chat.
    this.chatId = session.sessionId;
    this.onSessionChange = onSessionChange ?? null;
    this.stopOnAbort = stopOnAbort;
    // A resumed stream replays the reply from its start: the chat rebuilds
    // the message from it instead of appending to what it holds.
    this.resumeStreamIsReplay = true;
    this.requests = 0;
    // The sequence of each message the chat knows under an id of its own
    // (a user message the chat made), by that id.
    this.sequences = new Map();
  }

  /**
   * useChat's send: trigger 'submit-message' posts the last message (a
   * user message) or, for an assistant message with approval responses,
   * answers them and continues it; 'submit-message' with the messageId of
   * an earlier user message is an edit (a fork with the new parts);
   * 'regenerate-message' answers the last user message again (a fork that
   * regenerates). Resolves with the reply as UIMessageChunks.
   */
  async sendMessages({ trigger, messageId, messages, abortSignal, body } = {}) {
    const n = ++this.requests;
    const last = messages?.at(-1);
    if (!last) throw new AgentsyncError('bad_request', 'sendMessages: no messages');
    if (trigger === 'regenerate-message') {
      const seq = await this.sequenceOf(last.id);
      // The reply to regenerate comes right after its user message.
      const at = last.role === 'user' ? seq + 1 : seq;
      const info = await this.session.regenerate(at);
      const session = await this.switchBranch(info.session_id);
      return this.follow(session, n, abortSignal, (m) => m.role === 'agent' && m.sequence >= at);
    }
    if (last.role === 'assistant') return this.continueMessage(last, n, abortSignal);
    const parts = toUserParts(last);
    if (parts.length === 0) throw new AgentsyncError('bad_request', 'sendMessages: the last message has no part a user message can hold');
    const edited = messageId != null && last.id === messageId ? await this.sequenceOf(messageId, { optional: true }) : undefined;
    if (edited !== undefined) {
      // An edit: the chat replaced a message it had sent before.
      const seq = edited;
      const info = await this.session.edit(seq, parts);
      const session = await this.switchBranch(info.session_id);
      this.sequences.set(last.id, seq);
      return this.follow(session, n, abortSignal, (m) => m.role === 'agent' && m.sequence > seq);
    }
    const session = this.session;
    const opts = {};
    if (body?.delivery) opts.delivery = body.delivery;
    const user = await session.send(parts, opts);
    this.sequences.set(last.id, user.sequence);
    const ownTurn = opts.delivery === 'queue' || opts.delivery === 'interrupt';
    return this.follow(session, n, abortSignal, ownTurn ? (m) => m.role === 'agent' && m.turn_id === user.turn_id : (m) => m.role === 'agent' && m.sequence > user.sequence);
  }

  /**
   * The reply still streaming in the session, replayed from its start and
   * then live (resumeStreamIsReplay), or null when none streams. A reload
   * that loaded the history (loadUIMessages) resumes with no character
   * doubled: the chat replaces the message it holds by the replay.
   */
  async reconnectToStream({ abortSignal } = {}) {
    const n = ++this.requests;
    const session = this.session;
    let view = session.view;
    if (view.status !== 'live' && !session.closed) {
      // Just connected (wait: false) or reconnecting: the view may be old.
      view = await session.waitFor((v) => v.status === 'live', { timeoutMs: 10000 }).catch(() => session.view);
    }
    const last = lastVisible(view);
    if (!last || last.role !== 'agent' || last.state !== 'streaming') return null;
    return this.follow(session, n, abortSignal, (m) => m.message_id === last.message_id);
  }

  /**
   * Stops the session's running turn (the stop action): its message closes
   * with the stop's action part. Resolves false when no turn ran.
   */
  async stop() {
    try {
      await this.session.action(ActionStop);
      return true;
    } catch (err) {
      if (err?.code === 'conflict') return false;
      throw err;
    }
  }

  /** loadUIMessages of the current session; the ids it gives are remembered for edits. */
  async loadMessages(opts) {
    const page = await loadUIMessages(this.session, opts);
    for (const [id, seq] of page.sequences) this.sequences.set(id, seq);
    return page;
  }

  /**
   * The versions at the position of message id (a UIMessage id): the
   * session's branches(), {sequence, index, items: [{session_id, index,
   * message?}]}, for a ‹ index+1 / items.length › picker.
   */
  async branches(id) {
    return this.session.branches(await this.sequenceOf(id));
  }

  /** The positions of the path with more than one version: [{sequence, count, index}]. */
  alternatives(params) {
    return this.session.alternatives(params);
  }

  /**
   * Moves the chat to another session of the conversation (a version
   * branches() names, or a fork): the old Session is closed. Then load the
   * new path's history (loadMessages) into the chat (chat.messages = ...).
   */
  async switchBranch(sessionId) {
    if (sessionId === this.session.sessionId) return this.session;
    const next = await this.session.switchBranch(sessionId);
    this.session = next;
    this.onSessionChange?.(next);
    return next;
  }

  /** The sequence of a message the chat holds, by its UIMessage id. */
  async sequenceOf(id, { optional = false } = {}) {
    const known = this.sequences.get(id);
    if (known !== undefined) return known;
    const inView = this.session.view.messages.find((m) => m.message_id === id);
    if (inView) return inView.sequence;
    // Older than the view holds: read the path's pages back to it.
    let before;
    for (let i = 0; i < 1000; i++) {
      const page = await this.session.messages(before === undefined ? { limit: 200 } : { limit: 200, before_sequence: before });
      const m = page.items.find((x) => x.message_id === id);
      if (m) return m.sequence;
      if (!page.has_more) break;
      before = page.next_before_sequence;
    }
    if (optional) return undefined;
    throw new AgentsyncError('not_found', `message ${id} is not in session ${this.session.sessionId}`);
  }

  // Answers the approval responses of the chat's assistant message (the
  // useChat way: addToolApprovalResponse, then sendAutomaticallyWhen), then
  // streams that message on from what the chat has of it.
  async continueMessage(last, n, abortSignal) {
    const session = this.session;
    for (const p of last.parts) {
      if (p.state !== 'approval-responded' || typeof p.approval?.approved !== 'boolean') continue;
      try {
        await session.answer(p.approval.id, { approved: p.approval.approved });
      } catch (err) {
        if (err?.code !== 'not_pending') throw err; // answered already: the message shows the outcome
      }
    }
    const id = last.id;
    // The message must be in the view before its answer can be seen in it.
    await session.waitFor((v) => v.messages.some((m) => m.message_id === id), { timeoutMs: 30000 });
    return this.follow(session, n, abortSignal, (m) => m.message_id === id, last.parts);
  }

  // The reply (the first message isReply matches) as a stream of
  // UIMessageChunks, from the session's views until it is done or waits on
  // an approval. An abort stops the turn on the server unless another
  // request of this chat starts in the same task (useChat replacing a
  // resumed stream).
  follow(session, n, abortSignal, isReply, seed) {
    const emitter = new ChunkEmitter();
    let replyId = null;
    let cleanup = () => {};
    let ended = false;
    const transport = this;
    return new ReadableStream({
      start(controller) {
        const end = (err) => {
          if (ended) return;
          ended = true;
          cleanup();
          if (err) controller.error(err);
          else controller.close();
        };
        const onView = (view) => {
          if (ended) return;
          const m = findReply(view, replyId, isReply);
          if (!m) return;
          if (replyId === null) {
            replyId = m.message_id;
            if (seed) emitter.seed(m, seed);
          }
          for (const c of emitter.emit(m)) controller.enqueue(c);
          if (m.state === 'done' || awaitsApproval(m)) {
            controller.enqueue({ type: 'finish' });
            end();
          }
        };
        const onAbort = () => {
          end();
          if (!transport.stopOnAbort) return;
          // A request that replaces this one starts in the same task.
          setTimeout(() => {
            if (transport.requests !== n || session.closed) return;
            const m = replyId && session.view.messages.find((x) => x.message_id === replyId);
            if (m && m.state !== 'streaming') return; // ended already: a late stop must not stop the next turn
            session.action(ActionStop).catch(() => {});
          }, 0);
        };
        if (abortSignal?.aborted) {
          onAbort();
          return;
        }
        if (session.closed) {
          end(session.cause ?? new AgentsyncError('closed', 'the session is closed'));
          return;
        }
        abortSignal?.addEventListener('abort', onAbort, { once: true });
        const offStatus = session.on('status', ({ status, cause }) => {
          // Closed by the host (a switch of branch): the stream just ends.
          if (status === 'closed') end(cause ?? undefined);
        });
        const unsubscribe = session.subscribe(onView);
        cleanup = () => {
          unsubscribe();
          offStatus();
          abortSignal?.removeEventListener('abort', onAbort);
        };
        if (ended) cleanup();
      },
      cancel() {
        ended = true;
        cleanup();
      },
    });
  }
}

// The newest visible message of a view.
function lastVisible(view) {
  for (let i = view.messages.length - 1; i >= 0; i--) {
    if (view.messages[i].visibility !== 'internal') return view.messages[i];
  }
  return undefined;
}

// The followed message: by id once known, else the oldest the predicate
// takes among the view's newest messages.
function findReply(view, replyId, isReply) {
  const msgs = view.messages;
  if (replyId !== null) {
    for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].message_id === replyId) return msgs[i];
    return undefined;
  }
  let found;
  for (let i = msgs.length - 1; i >= 0 && i >= msgs.length - 50; i--) {
    if (msgs[i].visibility !== 'internal' && isReply(msgs[i])) found = msgs[i];
  }
  return found;
}

// A pending approval: the stream ends there, and useChat sends the
// decision back in a new request (addToolApprovalResponse).
function awaitsApproval(m) {
  return m.parts.some((p) => p.type === 'interaction' && p.status === 'pending' && p.request?.kind === 'approval');
}

// A UIMessage's parts as the parts of an agentsync user message.
export function toUserParts(message) {
  const parts = [];
  for (const p of message.parts ?? []) {
    if (p.type === 'text') {
      if (p.text) parts.push({ type: 'text', text: p.text });
    } else if (p.type === 'file') {
      const f = { type: 'file', url: p.url, media_type: p.mediaType };
      if (p.filename) f.filename = p.filename;
      parts.push(f);
    } else if (p.type === 'data-agentsync-context') {
      const c = { type: 'context', context: p.data?.context ?? '' };
      if (p.data?.tag) c.tag = p.data.tag;
      parts.push(c);
    } else if (typeof p.type === 'string' && p.type.startsWith('data-') && !p.type.startsWith('data-agentsync-')) {
      const d = { type: 'data', data_type: p.type.slice(5), data: p.data ?? null };
      if (p.id) d.data_id = p.id;
      parts.push(d);
    }
  }
  return parts;
}

// The stages a tool part goes through in the UI stream.
const TOOL_NONE = 0;
const TOOL_STARTED = 1;
const TOOL_INPUT = 2;
const TOOL_APPROVAL_REQUESTED = 3;
const TOOL_APPROVAL_RESPONDED = 4;
const TOOL_FINAL = 5;

const UI_TOOL_STAGE = {
  'input-streaming': TOOL_STARTED,
  'input-available': TOOL_INPUT,
  'approval-requested': TOOL_APPROVAL_REQUESTED,
  'approval-responded': TOOL_APPROVAL_RESPONDED,
  'output-available': TOOL_FINAL,
  'output-error': TOOL_FINAL,
  'output-denied': TOOL_FINAL,
};

/**
 * Turns successive states of one agent message into UIMessageChunks: it
 * remembers what it sent of each part and sends only the difference, so a
 * stream that starts late (a resume) first replays the message so far, and
 * no character is ever sent twice. The same walk as the server's /v1/chat
 * (server/internal/api/uistream.go).
 */
export class ChunkEmitter {
  constructor() {
    this.started = false;
    this.sent = new Map(); // part_id -> what the chat has of the part
  }

  /** The chunks that bring the chat from what it has to message m. */
  emit(m) {
    const out = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', messageId: m.message_id });
    }
    const approvals = approvalsByTool(m);
    for (const p of m.parts) {
      let s = this.sent.get(p.part_id);
      if (!s) this.sent.set(p.part_id, (s = { started: false, textLen: 0, ended: false, toolStage: TOOL_NONE, data: undefined }));
      switch (p.type) {
        case 'text':
        case 'reasoning':
          textChunks(out, p, s);
          break;
        case 'tool':
          toolChunks(out, p, s, approvals.get(p.tool_call_id));
          break;
        case 'file':
          if (!s.started) {
            s.started = true;
            out.push({ type: 'file', url: p.url, mediaType: p.media_type });
          }
          break;
        default: {
          const c = dataChunk(p);
          if (c) {
            const json = JSON.stringify(c);
            if (json !== s.data) {
              s.data = json;
              out.push(c);
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * Records what the chat already has of m: the UIMessage parts it sent
   * back (an approval's continuation), in the order toUIMessage gives
   * them, so the stream continues that message instead of repeating it.
   */
  seed(m, client) {
    this.started = true;
    const approvals = approvalsByTool(m);
    let j = 0;
    for (const p of m.parts) {
      const c = dataChunk(p);
      if (!c && p.type !== 'text' && p.type !== 'reasoning' && p.type !== 'tool' && p.type !== 'file') continue;
      const have = client[j++];
      if (!have) return;
      const s = { started: true, textLen: Math.min(have.text?.length ?? 0, p.text?.length ?? 0), ended: have.state === 'done', toolStage: TOOL_NONE, data: undefined };
      if (p.type === 'tool') {
        s.toolStage = UI_TOOL_STAGE[have.state] ?? TOOL_NONE;
        if (s.toolStage >= TOOL_APPROVAL_REQUESTED && !approvals.get(p.tool_call_id)) s.toolStage = TOOL_INPUT;
      } else if (c && c.id === undefined) {
        // One without an id would be added twice: it counts as sent. One
        // with an id is sent again (replaced in place: the latest).
        s.data = JSON.stringify(c);
      }
      this.sent.set(p.part_id, s);
    }
  }
}

function textChunks(out, p, s) {
  const kind = p.type; // text or reasoning
  if (!s.started) {
    s.started = true;
    out.push({ type: `${kind}-start`, id: p.part_id });
  }
  const text = p.text ?? '';
  if (text.length > s.textLen) {
    out.push({ type: `${kind}-delta`, id: p.part_id, delta: text.slice(s.textLen) });
    s.textLen = text.length;
  }
  if (p.state === 'done' && !s.ended && s.textLen === text.length) {
    s.ended = true;
    out.push({ type: `${kind}-end`, id: p.part_id });
  }
}

// Walks a tool part through the AI SDK's states up to where p is. The AI
// SDK has no chunk for an approval's answer: the chat marks it itself
// (addToolApprovalResponse) before it sends it.
function toolChunks(out, p, s, approval) {
  const target = toolTarget(p, approval);
  for (let stage = s.toolStage + 1; stage <= target; stage++) {
    switch (stage) {
      case TOOL_STARTED:
        out.push({ type: 'tool-input-start', toolCallId: p.tool_call_id, toolName: p.tool_name });
        break;
      case TOOL_INPUT:
        out.push({ type: 'tool-input-available', toolCallId: p.tool_call_id, toolName: p.tool_name, input: p.input ?? null });
        break;
      case TOOL_APPROVAL_REQUESTED:
        if (approval) out.push({ type: 'tool-approval-request', toolCallId: p.tool_call_id, approvalId: approval.interaction_id });
        break;
      case TOOL_FINAL:
        if (p.state === 'output-available') out.push({ type: 'tool-output-available', toolCallId: p.tool_call_id, output: p.output ?? null });
        else if (p.state === 'output-error') out.push({ type: 'tool-output-error', toolCallId: p.tool_call_id, errorText: errorText(p.output) });
        else if (p.state === 'output-denied') out.push({ type: 'tool-output-denied', toolCallId: p.tool_call_id });
        break;
    }
    s.toolStage = stage;
  }
}

function toolTarget(p, approval) {
  const answered = approval?.status === 'resolved';
  switch (p.state) {
    case 'input-streaming':
      return TOOL_STARTED;
    case 'awaiting-approval':
      return approval ? TOOL_APPROVAL_REQUESTED : TOOL_INPUT;
    case 'running':
    case 'input-available':
      return answered ? TOOL_APPROVAL_RESPONDED : TOOL_INPUT;
    case 'output-available':
    case 'output-error':
    case 'output-denied':
      return TOOL_FINAL;
    default:
      return TOOL_INPUT;
  }
}

function approvalsByTool(m) {
  const out = new Map();
  for (const p of m.parts) {
    if (p.type === 'interaction' && p.request?.kind === 'approval') out.set(p.request.tool_call_id, p);
  }
  return out;
}

// The data-* chunk of a part the AI SDK has no type for (toUIMessage's
// data parts), or null (an approval is its tool's).
function dataChunk(p) {
  switch (p.type) {
    case 'data': {
      const c = { type: `data-${p.data_type}`, data: p.data ?? null };
      if (p.data_id) c.id = p.data_id;
      return c;
    }
    case 'interaction': {
      if (p.request?.kind !== 'question') return null;
      const data = { question: p.request?.question ?? '', tool_call_id: p.request?.tool_call_id ?? '', status: p.status };
      if (p.response?.answer) data.answer = p.response.answer;
      return { type: 'data-agentsync-question', id: p.interaction_id, data };
    }
    case 'action': {
      const data = { action_type: p.action_type, state: p.state };
      if (p.title) data.title = p.title;
      return { type: 'data-agentsync-action', id: p.action_id, data };
    }
    case 'error':
      return { type: 'data-agentsync-error', id: p.part_id, data: { scope: p.scope, code: p.code, message: p.message, recoverable: !!p.recoverable } };
    case 'context': {
      const data = { context: p.context ?? '' };
      if (p.tag) data.tag = p.tag;
      return { type: 'data-agentsync-context', id: p.part_id, data };
    }
    default:
      return null;
  }
}
