// Part views: one class per part type of the model (docs/protocol.md §2).
// A view is created once per part_id and then updated in place, so a
// streaming part only ever touches the DOM it changes, and form state (a
// half-typed answer, an opened <details>) survives every re-render.
//
// ctx, shared by every view, carries the page's actions:
//   ctx.answer(interactionId, response) -> Promise
//   ctx.toast(text, kind)

import { el, setText, toggle, pretty, fingerprint, safeURL } from './util.js';
import { icon } from './icons.js';
import { StreamText } from './stream-text.js';
import { MarkdownView } from './markdown.js';

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
      return new FileView();
    case 'data':
      return new DataView();
    case 'action':
      return new ActionView();
    case 'error':
      return new ErrorView();
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
    this.body.set(part.text, streaming);
    toggle(this.body.el, 'streaming', streaming);
  }
}

class ReasoningView {
  constructor() {
    this.label = el('span', { class: 'label' });
    this.size = el('span', { class: 'muted' });
    this.body = new StreamText('text reasoning-text', 'reasoning-text');
    this.details = el(
      'details',
      { class: 'reasoning' },
      el('summary', {}, icon('spark'), this.label, this.size),
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
  }

  update(part) {
    this.el.dataset.partId = part.part_id;
    const streaming = part.state === 'streaming';
    this.body.set(part.text, streaming);
    toggle(this.body.el, 'streaming', streaming);
    setText(this.size, `${(part.text ?? '').length.toLocaleString()} chars`);
    if (part.state !== this.state) {
      this.state = part.state;
      setText(this.label, streaming ? 'Thinking…' : 'Reasoning');
      toggle(this.details, 'live', streaming);
      if (!this.userToggled) this.details.open = streaming;
    }
  }
}

const TOOL_STATES = {
  'input-streaming': ['Preparing input', 'pending'],
  'input-available': ['Ready', 'pending'],
  'awaiting-approval': ['Awaiting approval', 'warn'],
  running: ['Running', 'live'],
  'output-available': ['Done', 'ok'],
  'output-error': ['Failed', 'bad'],
  'output-denied': ['Denied', 'bad'],
};

const TOOL_STEPS = ['Input', 'Approval', 'Running', 'Result'];

function toolStep(state) {
  switch (state) {
    case 'input-streaming':
    case 'input-available':
      return 0;
    case 'awaiting-approval':
      return 1;
    case 'running':
      return 2;
    default:
      return 3;
  }
}

class ToolView extends Base {
  constructor() {
    super(null);
    this.name = el('span', { class: 'card-title' });
    this.callId = el('span', { class: 'muted mono' });
    this.badge = el('span', { class: 'badge', dataset: { testid: 'tool-state' } });
    this.steps = TOOL_STEPS.map((s) => el('li', { text: s }));
    this.input = el('pre', { class: 'code', dataset: { testid: 'tool-input' } });
    this.inputBox = el('details', { class: 'io' }, el('summary', { text: 'Input' }), this.input);
    this.output = el('pre', { class: 'code', dataset: { testid: 'tool-output' } });
    this.outputLabel = el('div', { class: 'io-label' });
    this.outputBox = el('div', { class: 'io' }, this.outputLabel, this.output);
    this.el = el(
      'div',
      { class: 'part card tool', dataset: { testid: 'tool', type: 'tool' } },
      el('div', { class: 'card-head' }, icon('tool'), this.name, this.callId, this.badge),
      el('ol', { class: 'steps' }, ...this.steps),
      this.inputBox,
      this.outputBox,
    );
    // Once the user folds or unfolds the input, stop doing it for them.
    this.inputBox.querySelector('summary').addEventListener('click', () => {
      this.inputBox.dataset.auto = 'off';
    });
  }

  render(part, msg) {
    const [label, tone] = TOOL_STATES[part.state] ?? [part.state ?? 'unknown', 'pending'];
    // The approval step only applies to calls gated by an approval.
    const gated = part.state === 'awaiting-approval' || part.state === 'output-denied' ||
      (msg?.parts ?? []).some((p) => p.type === 'interaction' && p.request?.kind === 'approval' && p.request?.tool_call_id === part.tool_call_id);
    this.el.dataset.state = part.state ?? '';
    setText(this.name, part.tool_name || 'tool');
    setText(this.callId, part.tool_call_id ?? '');
    setText(this.badge, label);
    this.badge.className = `badge ${tone}`;

    const step = toolStep(part.state);
    const failed = part.state === 'output-error' || part.state === 'output-denied';
    this.steps.forEach((li, i) => {
      li.className = i < step ? 'done' : i === step ? (failed ? 'current bad' : 'current') : '';
    });
    if (!gated) this.steps[1].className = 'skipped';
    if (part.state === 'output-denied') this.steps[2].className = 'skipped'; // it never ran
    setText(this.steps[1], gated ? 'Approval' : 'No approval');
    setText(this.steps[3], part.state === 'output-denied' ? 'Denied' : part.state === 'output-error' ? 'Error' : 'Result');

    setText(this.input, pretty(part.input) || (part.state === 'input-streaming' ? '…' : '{}'));
    // Show the input while there is nothing else to look at.
    if (this.inputBox.dataset.auto !== 'off') this.inputBox.open = step < 3;

    let out = null;
    if (part.state === 'output-denied') out = part.output ?? 'The user denied this call.';
    else if (part.output !== undefined && part.output !== null) out = part.output;
    this.outputBox.hidden = out === null;
    toggle(this.outputBox, 'bad', failed);
    setText(this.outputLabel, part.state === 'output-error' ? 'Error' : part.state === 'output-denied' ? 'Denied' : 'Output');
    setText(this.output, out === null ? '' : pretty(out));
  }
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
    this.result = el('div', { class: 'result', dataset: { testid: 'interaction-result' } });
    this.controls = el('div', { class: 'controls' });
    this.el = el(
      'div',
      { class: 'part card interaction', dataset: { testid: 'interaction', type: 'interaction' } },
      el('div', { class: 'card-head' }, this.iconSlot, this.title, this.badge),
      this.prompt,
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
    } else if (kind === 'question') {
      setText(this.title, 'Question');
      setText(this.prompt, req.question ?? '');
      this.detail.hidden = true;
    } else {
      setText(this.title, `Interaction: ${req.kind ?? 'unknown'}`);
      setText(this.prompt, '');
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

function describeResult(kind, part) {
  if (part.status === 'cancelled') return 'Cancelled: the turn ended before an answer came.';
  if (part.status !== 'resolved') return '';
  const res = part.response && typeof part.response === 'object' ? part.response : {};
  if (kind === 'approval') return res.approved ? 'Approved' : 'Denied';
  if (kind === 'question') return `Answered: ${res.answer ?? pretty(part.response)}`;
  return `Response: ${pretty(part.response)}`;
}

class FileView extends Base {
  constructor() {
    super(el('div', { class: 'part file', dataset: { testid: 'file', type: 'file' } }));
  }

  render(part) {
    const href = safeURL(part.url);
    const name = part.filename || (part.url ? String(part.url).split('/').pop() : 'file');
    const link = el(href ? 'a' : 'span', { class: 'file-chip', href, target: href ? '_blank' : null, rel: 'noopener' },
      icon('file'),
      el('span', { class: 'file-name', text: name }),
      el('span', { class: 'muted', text: part.media_type ?? '' }),
    );
    const preview = href && String(part.media_type ?? '').startsWith('image/')
      ? el('img', { class: 'file-preview', src: href, alt: name, loading: 'lazy' })
      : null;
    this.el.replaceChildren(...[preview, link].filter(Boolean));
  }
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
    setText(this.type, part.data_type || 'data');
    setText(this.id, part.data_id ?? '');
    setText(this.body, pretty(part.data) || 'null');
    this.chart?.remove();
    this.chart = barChart(part.data);
    if (this.chart) this.body.before(this.chart);
  }
}

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

const ACTION_NAMES = { stop: 'Stop', set_model: 'Model changed', set_approval_mode: 'Approval mode changed' };

class ActionView extends Base {
  constructor() {
    super(null);
    this.title = el('span', { class: 'action-title' });
    this.badge = el('span', { class: 'badge' });
    this.el = el('div', { class: 'part action', dataset: { testid: 'action', type: 'action' } }, icon('bolt'), this.title, this.badge);
  }

  render(part) {
    setText(this.title, part.title || ACTION_NAMES[part.action_type] || part.action_type || 'action');
    setText(this.badge, part.state ?? '');
    this.badge.className = `badge ${part.state === 'completed' ? 'ok' : part.state === 'failed' ? 'bad' : 'pending'}`;
    this.el.dataset.state = part.state ?? '';
  }
}

class ErrorView extends Base {
  constructor() {
    super(null);
    this.code = el('span', { class: 'card-title mono' });
    this.message = el('div', { class: 'error-message' });
    this.meta = el('div', { class: 'muted' });
    this.el = el(
      'div',
      { class: 'part card error', dataset: { testid: 'error', type: 'error' } },
      el('div', { class: 'card-head' }, icon('alert'), this.code),
      this.message,
      this.meta,
    );
  }

  render(part) {
    setText(this.code, part.code || 'error');
    // A stop the user asked for is recorded as an error part, but it is no
    // failure: show it quietly.
    toggle(this.el, 'soft', part.code === 'stopped' || part.code === 'cancelled');
    setText(this.message, part.message ?? '');
    const scope = part.scope ? `${part.scope} error` : 'error';
    setText(this.meta, `${scope} · ${part.recoverable ? 'recoverable' : 'not recoverable'}`);
  }
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
