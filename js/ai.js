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
