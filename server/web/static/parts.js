// Part views: one class per part type of the model (docs/protocol.md §2).
// A view is created once per part_id and then updated in place, so a
// streaming part only ever touches the DOM it changes, and form state (a
// half-typed answer, an opened <details>) survives every re-render.
//
// ctx, shared by every view, carries the page's actions:
//   ctx.answer(interactionId, response) -> Promise
//   ctx.toast(text, kind)
//   ctx.canRetry() -> whether the server lists the retry action
//   ctx.retry() -> Promise (posts {action_type: "retry"})
//   ctx.signFile(url) -> Promise<{url, expires_at}> (a signed URL of a file of this server)

import { el, setText, toggle, pretty, fingerprint, safeURL, plural } from './util.js';
import { icon } from './icons.js';
import { StreamText } from './stream-text.js';
import { MarkdownView } from './markdown.js';
import { READ_MARKER } from './steer-placement.js';

/** createPartView returns the view for one part of a message. */
export function createPartView(part, ctx) {
  switch (part.type) {
    case 'text':
      return new TextView();
    case 'reasoning':
      return new ReasoningView();
    case 'tool':
      return new ToolView();
    case 'interaction':
      return new InteractionView(ctx);
    case 'file':
      return new FileView(ctx);
    case 'data':
      return new DataView();
    case 'action':
      return new ActionView();
    case 'error':
      return new ErrorView(ctx);
    case 'context':
      return new ContextView();
    default:
      return new UnknownView();
  }
}

/** Base keeps the type and a fingerprint so unchanged parts cost nothing. */
class Base {
  constructor(el) {
    this.el = el;
    this.print = null;
  }

  /** update re-renders only when the part's content changed. */
  update(part, msg) {
    const print = fingerprint(part);
    if (print === this.print) return;
    this.print = print;
    this.el.dataset.partId = part.part_id;
    this.render(part, msg);
  }
}

// sameText reports whether part's text is the string a text view showed
// last (and records it). The host hands a text that did not change over as
// the same string, also when a part frame or a commit replaced the part
// (kept texts), and V8 compares a string with itself at once: the body
// then need not compare a long answer's text with the one it built, which
// copied both (22-26 ms for 1 MB in the page's trace at done).
function sameText(view, part) {
  const same = view.text !== undefined && part.text === view.text;
  view.text = part.text;
  return same;
}

// TextView: an agent's text is markdown (what models write); a user's is
// shown as typed, as chat apps do.
class TextView {
  constructor() {
    this.el = el('div', { class: 'part part-text', dataset: { testid: 'part', type: 'text' } });
    this.body = null;
  }

  update(part, msg) {
    if (!this.body) {
      this.body = msg?.role === 'agent' ? new MarkdownView('part-text') : new StreamText('text', 'part-text');
      this.el.append(this.body.el);
    }
    this.el.dataset.partId = part.part_id;
    const streaming = part.state === 'streaming';
    this.body.set(part.text, streaming, sameText(this, part));
    toggle(this.body.el, 'streaming', streaming);
  }

  /**
   * append takes text the part grew by (a change event's `appended`),
   * without comparing or re-reading the text shown. False when it cannot
   * (not built yet, or not streaming): the caller renders the part whole.
   */
  append(text, part) {
    if (!this.body || part.state !== 'streaming' || !this.body.streaming) return false;
    this.body.append(text);
    this.text = part.text;
    return true;
  }

  /**
   * take is append for a change that also did more (the part ended, the
   * message moved on): the streamed view takes the text, and update()
   * renders the rest with the text known to be the one shown.
   */
  take(text, part) {
    if (!this.body?.streaming || this.text === undefined) return;
    this.body.append(text);
    this.text = part.text;
  }
}

// ReasoningView: open while the model thinks, folded to one line once it
// is done ("Thought for 4s" when this page watched it think, else its
// length in words: parts carry no timestamps). A chevron says it unfolds.
class ReasoningView {
  constructor() {
    this.label = el('span', { class: 'label', dataset: { testid: 'reasoning-label' } });
    this.body = new StreamText('text reasoning-text', 'reasoning-text');
    this.details = el(
      'details',
      { class: 'reasoning' },
      el('summary', {}, icon('chevron', 'icon chevron'), this.label),
      this.body.el,
    );
    // Follow the stream (open while thinking, folded once done) until the
    // user opens or closes it: from then on their choice wins.
    this.userToggled = false;
    this.details.querySelector('summary').addEventListener('click', () => {
      this.userToggled = true;
    });
    this.el = el('div', { class: 'part part-reasoning', dataset: { testid: 'part', type: 'reasoning' } }, this.details);
    this.state = null;
    this.startedAt = 0; // when this page saw it streaming (0: never)
    this.tookMs = 0;
  }

  update(part) {
    this.el.dataset.partId = part.part_id;
    const streaming = part.state === 'streaming';
    this.body.set(part.text, streaming, sameText(this, part));
    toggle(this.body.el, 'streaming', streaming);
    if (part.state !== this.state) {
      if (streaming && !this.startedAt) this.startedAt = performance.now();
      if (!streaming && this.startedAt && !this.tookMs) this.tookMs = performance.now() - this.startedAt;
      this.state = part.state;
      toggle(this.details, 'live', streaming);
      this.el.dataset.state = part.state ?? '';
      if (!this.userToggled) this.details.open = streaming;
    }
    setText(this.label, streaming ? 'Thinking…' : thoughtLabel(this.tookMs, part.text ?? ''));
  }

  /** append: as TextView.append. */
  append(text, part) {
    if (part.state !== 'streaming' || this.state !== 'streaming') return false;
    this.body.append(text);
    this.text = part.text;
    return true;
  }
}

function thoughtLabel(ms, text) {
  if (ms >= 1000) return `Thought for ${Math.round(ms / 1000)}s`;
  if (ms > 0) return 'Thought for a moment';
  const words = text.split(/\s+/).filter(Boolean).length;
  return `Thought · ${plural(words, 'word')}`;
}

const TOOL_STATES = {
  'input-streaming': ['Preparing', 'pending'],
  'input-available': ['Ready', 'pending'],
  'awaiting-approval': ['Awaiting approval', 'warn'],
  running: ['Running', 'live'],
  'output-available': ['Done', 'ok'],
  'output-error': ['Failed', 'bad'],
  'output-denied': ['Denied', 'bad'],
};

const FINISHED = new Set(['output-available', 'output-error', 'output-denied']);

// ToolView: one card per call. While the call is under way it is open and
// shows its input; once finished it folds to one line (name, state) and
// unfolds on click to show input and output. A call that is the vehicle of
// a question (ask_user) is hidden by MessageView: the question card says it.
class ToolView extends Base {
  constructor() {
    super(null);
    this.name = el('span', { class: 'card-title' });
    this.summaryText = el('span', { class: 'tool-summary muted' });
    this.badge = el('span', { class: 'badge', dataset: { testid: 'tool-state' } });
    this.input = el('pre', { class: 'code', dataset: { testid: 'tool-input' } });
    this.output = el('pre', { class: 'code', dataset: { testid: 'tool-output' } });
    this.outputLabel = el('div', { class: 'io-label' });
    this.outputBox = el('div', { class: 'io' }, this.outputLabel, this.output);
    this.head = el('summary', { class: 'card-head', dataset: { testid: 'tool-head' } },
      icon('chevron', 'icon chevron'), icon('tool'), this.name, this.summaryText, this.badge);
    this.details = el('details', { class: 'tool-details' },
      this.head,
      el('div', { class: 'tool-body' }, el('div', { class: 'io' }, el('div', { class: 'io-label', text: 'Input' }), this.input), this.outputBox),
    );
    this.el = el('div', { class: 'part card tool', dataset: { testid: 'tool', type: 'tool' } }, this.details);
    // Once the user folds or unfolds it, stop doing it for them.
    this.userToggled = false;
    this.head.addEventListener('click', () => {
      this.userToggled = true;
    });
  }

  render(part) {
    const [label, tone] = TOOL_STATES[part.state] ?? [part.state ?? 'unknown', 'pending'];
    const finished = FINISHED.has(part.state);
    this.el.dataset.state = part.state ?? '';
    this.el.title = part.tool_call_id ?? '';
    setText(this.name, part.tool_name || 'tool');
    setText(this.summaryText, oneLine(part.input));
    setText(this.badge, label);
    this.badge.className = `badge ${tone}`;
    toggle(this.el, 'finished', finished);
    if (!this.userToggled) this.details.open = !finished;

    setText(this.input, pretty(part.input) || (part.state === 'input-streaming' ? '…' : '{}'));
    let out = null;
    if (part.state === 'output-denied') out = part.output ?? 'The user denied this call.';
    else if (part.output !== undefined && part.output !== null) out = part.output;
    this.outputBox.hidden = out === null;
    const failed = part.state === 'output-error' || part.state === 'output-denied';
    toggle(this.outputBox, 'bad', failed);
    setText(this.outputLabel, part.state === 'output-error' ? 'Error' : part.state === 'output-denied' ? 'Denied' : 'Output');
    setText(this.output, out === null ? '' : pretty(out));
  }
}

// oneLine is a tool input as a short summary for the folded card:
// {"city":"Oslo"} -> city: Oslo.
function oneLine(input) {
  if (input == null) return '';
  let s;
  if (typeof input === 'object' && !Array.isArray(input)) {
    s = Object.entries(input).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : fingerprint(v)}`).join(', ');
  } else {
    s = typeof input === 'string' ? input : fingerprint(input);
  }
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

class InteractionView extends Base {
  constructor(ctx) {
    super(null);
    this.ctx = ctx;
    this.title = el('span', { class: 'card-title' });
    this.badge = el('span', { class: 'badge', dataset: { testid: 'interaction-status' } });
    this.iconSlot = el('span', { class: 'icon-slot' });
    this.prompt = el('div', { class: 'prompt', dataset: { testid: 'interaction-prompt' } });
    this.detail = el('pre', { class: 'code small' });
    this.why = el('div', { class: 'why muted', dataset: { testid: 'approval-why' } });
    this.result = el('div', { class: 'result', dataset: { testid: 'interaction-result' } });
    this.controls = el('div', { class: 'controls' });
    this.el = el(
      'div',
      { class: 'part card interaction', dataset: { testid: 'interaction', type: 'interaction' } },
      el('div', { class: 'card-head' }, this.iconSlot, this.title, this.badge),
      this.prompt,
      this.why,
      this.detail,
      this.controls,
      this.result,
    );
    this.kind = null;
    this.busy = false;
  }

  render(part, msg) {
    const req = part.request && typeof part.request === 'object' ? part.request : {};
    const kind = req.kind === 'approval' || req.kind === 'question' ? req.kind : 'other';
    this.interactionId = part.interaction_id;
    this.el.dataset.kind = kind;
    this.el.dataset.status = part.status ?? '';
    if (kind !== this.kind) this.#build(kind, req);

    const pending = part.status === 'pending';
    const res = part.response && typeof part.response === 'object' ? part.response : {};
    const denied = kind === 'approval' && part.status === 'resolved' && !res.approved;
    setText(this.badge, denied ? 'denied' : kind === 'approval' && part.status === 'resolved' ? 'approved' : part.status ?? '');
    this.badge.className = `badge ${pending ? 'warn' : denied ? 'bad' : part.status === 'resolved' ? 'ok' : ''}`;
    toggle(this.el, 'compact', !pending);
    this.controls.hidden = !pending;
    if (pending) this.#setBusy(this.busy);

    if (kind === 'approval') {
      const tool = (msg?.parts ?? []).find((p) => p.type === 'tool' && p.tool_call_id && p.tool_call_id === req.tool_call_id);
      const what = req.tool_name || tool?.tool_name || req.title || 'this tool call';
      setText(this.title, pending ? 'Approval needed' : `Approval for ${what}`);
      setText(this.prompt, req.message || req.prompt || `Allow ${what} to run?`);
      // The tool card right above already shows the input; repeat it only
      // when there is no such card.
      const shown = tool ? undefined : req.input ?? req.arguments;
      setText(this.detail, shown === undefined ? '' : pretty(shown));
      this.detail.hidden = shown === undefined || !pending;
      this.prompt.hidden = !pending;
      setText(this.why, approvalWhy(req.reason, what));
      this.why.hidden = !pending || !this.why.textContent;
    } else if (kind === 'question') {
      setText(this.title, 'Question');
      setText(this.prompt, req.question ?? '');
      this.detail.hidden = true;
      this.why.hidden = true;
    } else {
      setText(this.title, `Interaction: ${req.kind ?? 'unknown'}`);
      setText(this.prompt, '');
      this.why.hidden = true;
      setText(this.detail, pretty(part.request));
      this.detail.hidden = false;
    }
    setText(this.result, describeResult(kind, part));
    this.result.hidden = pending;
  }

  #build(kind, req) {
    this.kind = kind;
    this.iconSlot.replaceChildren(icon(kind === 'approval' ? 'shield' : 'question'));
    this.controls.replaceChildren();
    if (kind === 'approval') {
      this.buttons = [
        el('button', { class: 'btn primary', dataset: { testid: 'approve' }, text: 'Approve', onclick: () => this.#answer({ approved: true }) }),
        el('button', { class: 'btn danger', dataset: { testid: 'deny' }, text: 'Deny', onclick: () => this.#answer({ approved: false }) }),
      ];
      this.controls.append(...this.buttons);
    } else if (kind === 'question') {
      const input = el('input', { type: 'text', placeholder: 'Your answer', dataset: { testid: 'answer-input' }, autocomplete: 'off' });
      const submit = el('button', { class: 'btn primary', type: 'submit', dataset: { testid: 'answer-submit' }, text: 'Answer' });
      const form = el('form', { class: 'answer' }, input, submit);
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        const answer = input.value.trim();
        if (answer) this.#answer({ answer });
      });
      const options = Array.isArray(req.options) ? req.options : Array.isArray(req.choices) ? req.choices : [];
      const chips = options.map((o) =>
        el('button', { type: 'button', class: 'chip', text: String(o?.label ?? o), onclick: () => this.#answer({ answer: String(o?.value ?? o?.label ?? o) }) }),
      );
      this.buttons = [submit, input, ...chips];
      if (chips.length) this.controls.append(el('div', { class: 'chips' }, ...chips));
      this.controls.append(form);
    } else {
      this.buttons = [];
    }
  }

  #setBusy(busy) {
    this.busy = busy;
    for (const b of this.buttons ?? []) b.disabled = busy;
  }

  async #answer(response) {
    if (this.busy) return;
    this.#setBusy(true);
    try {
      await this.ctx.answer(this.interactionId, response);
    } catch (err) {
      this.ctx.toast(`Could not answer: ${err?.message ?? err}`, 'bad');
    } finally {
      this.#setBusy(false);
    }
  }
}

// approvalWhy explains an approval from its request's reason
// (docs/protocol.md §2): why send_email asks even under "auto".
function approvalWhy(reason, what) {
  if (reason === 'tool_requires_approval') return `${what} always asks before it runs, whatever the approval mode.`;
  if (reason === 'approval_mode_ask') return 'Asked because the approval mode is "ask before tools run".';
  return '';
}

function describeResult(kind, part) {
  if (part.status === 'cancelled') return 'Cancelled: the turn ended before an answer came.';
  if (part.status !== 'resolved') return '';
  const res = part.response && typeof part.response === 'object' ? part.response : {};
  if (kind === 'approval') return res.approved ? 'Approved' : 'Denied';
  if (kind === 'question') return `Answered: ${res.answer ?? pretty(part.response)}`;
  return `Response: ${pretty(part.response)}`;
}

// FileView: a file chip that downloads the file under its own name (a
// data: URL opened in a new tab shows about:blank), with its size when the
// URL tells it; an image shows inline above it. A file of this server (an
// upload: /v1/sessions/{id}/files/{blob}, docs/files.md) is read through a
// short-lived signed URL (ctx.signFile): an <img> or a link cannot carry
// the bearer token.
class FileView extends Base {
  constructor(ctx) {
    super(el('div', { class: 'part file', dataset: { testid: 'file', type: 'file' } }));
    this.ctx = ctx;
  }

  render(part) {
    const own = typeof part.url === 'string' && part.url.startsWith('/v1/sessions/') && !!this.ctx?.signFile;
    const href = own ? null : safeURL(part.url);
    const name = part.filename || (part.url && !String(part.url).startsWith('data:') ? String(part.url).split(/[?#]/)[0].split('/').pop() : '') || 'file';
    const bytes = dataURLSize(part.url);
    const same = own || (href && (href.startsWith('data:') || href.startsWith('blob:') || new URL(href).origin === location.origin));
    const image = String(part.media_type ?? '').startsWith('image/');
    const link = el(href || own ? 'a' : 'span', {
      class: 'file-chip',
      href,
      // download only works for same-origin, data: and blob: URLs; any other
      // opens in a new tab.
      download: same ? name : null,
      target: href && !same ? '_blank' : null,
      rel: href && !same ? 'noopener' : null,
      dataset: { testid: 'file-link' },
    },
    icon('file'),
    el('span', { class: 'file-name', text: name }),
    el('span', { class: 'muted', dataset: { testid: 'file-meta' }, text: [part.media_type, bytes === null ? '' : formatBytes(bytes)].filter(Boolean).join(' · ') }),
    );
    const preview = image && (href || own)
      ? el('img', { class: 'file-preview', src: href, alt: name, loading: 'lazy', dataset: { testid: 'file-image' } })
      : null;
    this.el.replaceChildren(...[preview, link].filter(Boolean));
    this.el.dataset.media = part.media_type ?? '';
    if (!own) return;
    const print = this.print;
    signedURL(this.ctx, part.url).then(
      (url) => {
        if (this.print !== print) return; // re-rendered since
        link.href = `${url}&download=1`;
        if (preview) preview.src = url;
      },
      (err) => {
        if (this.print === print) link.title = `Could not read the file: ${err?.message ?? err}`;
      },
    );
  }
}

// signedURL answers a signed URL of one of this server's files, reusing
// one while it has more than a minute left.
const signed = new Map(); // file url -> {promise, expires (ms)}
function signedURL(ctx, url) {
  const hit = signed.get(url);
  if (hit && (hit.expires === 0 || hit.expires - Date.now() > 60000)) return hit.promise;
  const entry = { expires: 0 };
  entry.promise = ctx.signFile(url).then(
    (r) => {
      entry.expires = r.expires_at;
      return r.url;
    },
    (err) => {
      signed.delete(url);
      throw err;
    },
  );
  signed.set(url, entry);
  return entry.promise;
}

// dataURLSize is the decoded size in bytes of a data: URL, null for others.
function dataURLSize(url) {
  const m = /^data:[^,]*?(;base64)?,(.*)$/s.exec(typeof url === 'string' ? url : '');
  if (!m) return null;
  if (!m[1]) {
    try {
      return new TextEncoder().encode(decodeURIComponent(m[2])).length;
    } catch {
      return null;
    }
  }
  const b64 = m[2].replace(/[^A-Za-z0-9+/=]/g, '');
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - pad;
}

function formatBytes(n) {
  if (n < 1024) return plural(n, 'byte');
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

class DataView extends Base {
  constructor() {
    super(null);
    this.type = el('span', { class: 'card-title' });
    this.id = el('span', { class: 'muted mono' });
    this.body = el('pre', { class: 'code', dataset: { testid: 'data-json' } });
    this.el = el(
      'div',
      { class: 'part card data', dataset: { testid: 'data', type: 'data' } },
      el('details', { open: true }, el('summary', { class: 'card-head' }, icon('data'), this.type, this.id), this.body),
    );
  }

  render(part) {
    // A steer's read marker is placement data (steer-placement.js), not
    // content; a step's token usage is the message's footer (messages.js).
    // The author of a member's message is its header (messages.js).
    this.el.hidden = part.data_type === READ_MARKER || part.data_type === USAGE || part.data_type === AUTHOR;
    if (this.el.hidden) return;
    if (part.data_type === DELIVERY_MARKER) {
      // A message queued or interrupting (docs/protocol.md §2): a note, not data.
      this.el.classList.add('delivery-note');
      setText(this.type, part.data?.delivery === 'interrupt' ? 'Sent to interrupt the answer' : 'Queued: answered after the current answer');
      setText(this.id, '');
      setText(this.body, '');
      this.body.hidden = true;
      return;
    }
    setText(this.type, part.data_type || 'data');
    setText(this.id, part.data_id ?? '');
    setText(this.body, pretty(part.data) || 'null');
    this.chart?.remove();
    this.chart = barChart(part.data);
    if (this.chart) this.body.before(this.chart);
  }
}

// The data part a real model's step ends with: {model, input_tokens, output_tokens, ...}.
const USAGE = 'usage';

// Who wrote a member's or a share link's message (docs/protocol.md §3.3).
const AUTHOR = 'agentsync.author';

// The data part of a message sent with delivery queue or interrupt.
const DELIVERY_MARKER = 'agentsync.delivery';

// barChart draws {labels: [...], values: [numbers]} (the scripted model's
// "chart" data) as CSS bars above the JSON; anything else gets no chart.
function barChart(data) {
  const labels = data?.labels;
  const values = data?.values;
  if (!Array.isArray(labels) || !Array.isArray(values) || values.length === 0 || values.length > 24) return null;
  if (!values.every((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0)) return null;
  const top = Math.max(...values) || 1;
  return el(
    'div',
    { class: 'bars', dataset: { testid: 'data-chart' } },
    ...values.map((v, i) =>
      el('div', { class: 'bar-col' },
        el('div', { class: 'bar-value', text: String(v) }),
        el('div', { class: 'bar', style: `height:${Math.round((v / top) * 100)}%` }),
        el('div', { class: 'bar-label', text: String(labels[i] ?? '') }),
      ),
    ),
  );
}

const ACTION_NAMES = { stop: 'Stopped', set_model: 'Model changed', set_approval_mode: 'Approval mode changed', retry: 'Retried' };

// ActionView: a settings change or a stop is a small note in the flow, not
// a card. A stop's note is the error part "stopped" (ErrorView): its action
// part stays hidden so a stop reads once, as "Stopped".
class ActionView extends Base {
  constructor() {
    super(null);
    this.title = el('span', { class: 'action-title' });
    this.el = el('div', { class: 'part note action', dataset: { testid: 'action', type: 'action' } }, icon('bolt'), this.title);
  }

  render(part) {
    this.el.hidden = part.action_type === 'stop';
    const failed = part.state === 'failed';
    setText(this.title, (part.title || ACTION_NAMES[part.action_type] || part.action_type || 'action') + (failed ? ' (failed)' : part.state === 'pending' ? '…' : ''));
    this.el.dataset.state = part.state ?? '';
    this.el.dataset.actionType = part.action_type ?? '';
  }
}

const QUIET_CODES = new Set(['stopped', 'cancelled']);

// ErrorView: a stop the user asked for is a quiet "Stopped" note; any other
// error is a card, with a Retry button when it is recoverable and the
// server supports the retry action (ctx.canRetry()).
class ErrorView extends Base {
  constructor(ctx) {
    super(null);
    this.ctx = ctx;
    this.code = el('span', { class: 'card-title' });
    this.message = el('div', { class: 'error-message' });
    this.retry = el('button', { type: 'button', class: 'btn small', dataset: { testid: 'retry' }, text: 'Retry', onclick: () => this.#retry() });
    this.el = el('div', { class: 'part card error', dataset: { testid: 'error', type: 'error' } });
    this.card = [el('div', { class: 'card-head' }, icon('alert'), this.code, this.retry), this.message];
  }

  render(part) {
    const quiet = QUIET_CODES.has(part.code);
    this.el.className = quiet ? 'part note stopped' : 'part card error';
    this.el.dataset.testid = quiet ? 'stopped-note' : 'error';
    this.el.dataset.code = part.code ?? '';
    if (quiet) {
      this.el.replaceChildren(icon('stop'), el('span', { text: part.code === 'stopped' ? 'Stopped' : 'Cancelled' }));
      return;
    }
    if (this.el.firstChild !== this.card[0]) this.el.replaceChildren(...this.card);
    setText(this.code, errorTitle(part));
    setText(this.message, part.message ?? '');
    this.message.title = `${part.scope ?? ''} error ${part.code ?? ''}`.trim();
    this.recoverable = !!part.recoverable;
    this.#showRetry();
  }

  /** setLatest: whether this error ends the session's last turn (MessageList). */
  setLatest(latest) {
    this.latest = latest;
    this.#showRetry();
  }

  #showRetry() {
    this.retry.hidden = !(this.recoverable && this.latest && this.ctx.canRetry());
  }

  async #retry() {
    this.retry.disabled = true;
    try {
      await this.ctx.retry();
    } catch (err) {
      this.ctx.toast(`Could not retry: ${err?.message ?? err}`, 'bad');
    } finally {
      this.retry.disabled = false;
    }
  }
}

function errorTitle(part) {
  const words = String(part.code || 'error').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

class ContextView extends Base {
  constructor() {
    super(null);
    this.tag = el('span', { class: 'tag' });
    this.text = el('span', { class: 'context-text' });
    this.el = el('div', { class: 'part context', dataset: { testid: 'context', type: 'context' } }, this.tag, this.text);
  }

  render(part) {
    setText(this.tag, part.tag || 'context');
    setText(this.text, part.context ?? '');
  }
}

class UnknownView extends Base {
  constructor() {
    super(null);
    this.body = el('pre', { class: 'code' });
    this.el = el('div', { class: 'part card unknown', dataset: { testid: 'part', type: 'unknown' } }, this.body);
  }

  render(part) {
    setText(this.body, pretty(part));
  }
}
