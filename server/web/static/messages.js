// Keyed rendering of the message list: one MessageView per message_id,
// one part view per part_id. A render walks the view's messages, skips every
// message that cannot have changed (same object, or done at the revision
// already shown: done is final), and moves or removes elements only where the
// order changed (older history prepended, a resync dropping messages).

import { el, setText, toggle, timeOf, copyText } from './util.js';
import { icon } from './icons.js';
import { createPartView } from './parts.js';
import { placeSteers } from './steer-placement.js';

export class MessageList {
  /** @param {HTMLElement} container the element holding one child per message */
  constructor(container, ctx) {
    this.container = container;
    this.ctx = ctx;
    this.views = new Map(); // message_id -> MessageView
    this.stats = { appends: 0 }; // changes shown by appending alone; read by tests
    // The alternatives per position of the path: sequence -> {count, index}.
    // Beside the messages, never inside them (a done message never changes).
    this.alts = {};
  }

  /** setAlternatives shows ‹ i / n › on the messages whose position has alternatives. */
  setAlternatives(alts) {
    this.alts = alts ?? {};
    for (const view of this.views.values()) view.setAlternative(this.alts[view.msg?.sequence]);
  }

  /**
   * applyChange takes a host 'change' event before the view it leads to is
   * rendered: text a part only grew by is appended to that part's view, and
   * the message is marked as shown, so render() then skips it. Anything else
   * (a new part, a changed state, a reset) is left to render().
   */
  applyChange(change) {
    if (change.reset) return;
    for (const mc of change.messages) {
      const view = this.views.get(mc.message_id);
      if (view && mc.message && view.applyAppends(mc)) this.stats.appends++;
    }
  }

  /**
   * render brings the DOM in line with messages (oldest first). An agent
   * message that answered a steer shows in segments, each keyed on its own
   * (steer-placement.js).
   */
  render(messages) {
    const seen = new Set();
    let prev = null;
    let lastReply = null; // the newest agent reply with text
    for (const { key, msg } of placeSteers(messages)) {
      let view = this.views.get(key);
      if (!view) {
        view = new MessageView(this.ctx);
        this.views.set(key, view);
      }
      view.update(msg);
      view.setAlternative(msg.segment ? undefined : this.alts[msg.sequence]);
      seen.add(key);
      if (msg.role === 'agent' && !view.copy.hidden) lastReply = view;
      else if (msg.role === 'user' && msg.visibility !== 'internal') lastReply = null;
      const expected = prev ? prev.nextSibling : this.container.firstChild;
      if (expected !== view.el) this.container.insertBefore(view.el, expected);
      prev = view.el;
    }
    for (const view of this.views.values()) view.regen.hidden = view !== lastReply || !this.ctx.regenerate;
    // Retry acts on the session's last turn only (the server answers 409
    // otherwise): only an error that ends the newest reply offers it, and
    // an older one loses it once a retry or a new message follows.
    const latest = retryCandidate(messages);
    const endsWith = latest?.parts.at(-1).part_id;
    for (const view of this.views.values()) {
      // (A reply split at a steer: the segment holding its last part.)
      view.setLatestError(!!latest && view.msg?.message_id === latest.message_id && view.msg.parts?.at(-1)?.part_id === endsWith);
    }
    if (seen.size !== this.views.size) {
      for (const [id, view] of this.views) {
        if (!seen.has(id)) {
          view.el.remove();
          this.views.delete(id);
        }
      }
    }
  }

  clear() {
    this.views.clear();
    this.alts = {};
    this.container.replaceChildren();
  }
}

class MessageView {
  constructor(ctx) {
    this.ctx = ctx;
    this.msg = null;
    this.parts = new Map(); // part_id -> part view
    this.who = el('span', { class: 'who' });
    this.time = el('span', { class: 'time' });
    // Sequence and revision: debugging data, shown with the page's debug switch.
    this.meta = el('span', { class: 'meta debug-only', dataset: { testid: 'message-meta' } });
    // Copy an agent reply as its markdown source.
    this.copy = el('button', { type: 'button', class: 'msg-copy', title: 'Copy the reply as markdown', dataset: { testid: 'copy-message' }, text: 'Copy' });
    this.copy.addEventListener('click', () =>
      copyText(this.copy, (this.msg?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text ?? '').join('\n\n')));
    // Ask again: shown on the newest finished reply only (MessageList.render).
    this.regen = el('button', { type: 'button', class: 'msg-copy msg-regen', title: 'Ask the same again', dataset: { testid: 'regenerate' }, text: 'Regenerate' });
    this.regen.hidden = true;
    this.regen.addEventListener('click', () => {
      this.regen.disabled = true;
      Promise.resolve(this.ctx.regenerate?.(this.msg))
        .catch((err) => this.ctx.toast?.(`Could not regenerate: ${err?.message ?? err}`, 'bad'))
        .finally(() => { this.regen.disabled = false; });
    });
    // Edit a user message in place: Enter sends the edit as a fork, the
    // original stays (‹ 1 / 2 › on it).
    this.editBtn = el('button', { type: 'button', class: 'msg-copy msg-edit', title: 'Edit this message', 'aria-label': 'Edit', dataset: { testid: 'edit-message' } }, icon('pencil'));
    this.editBtn.hidden = true;
    this.editBtn.addEventListener('click', () => this.#startEdit());
    // The alternatives of this position: ‹ index+1 / count ›.
    this.prevBtn = el('button', { type: 'button', class: 'branch-btn', 'aria-label': 'Previous version', dataset: { testid: 'branch-prev' }, text: '‹' });
    this.nextBtn = el('button', { type: 'button', class: 'branch-btn', 'aria-label': 'Next version', dataset: { testid: 'branch-next' }, text: '›' });
    this.branchOf = el('span', { class: 'branch-of', dataset: { testid: 'branch-of' } });
    this.nav = el('span', { class: 'branch-nav', dataset: { testid: 'branch-nav' } }, this.prevBtn, this.branchOf, this.nextBtn);
    this.nav.hidden = true;
    this.alt = undefined;
    const go = (delta) => {
      if (!this.msg || !this.alt) return;
      Promise.resolve(this.ctx.switchBranch?.(this.msg.sequence, this.alt.index + delta))
        .catch((err) => this.ctx.toast?.(`Could not switch: ${err?.message ?? err}`, 'bad'));
    };
    this.prevBtn.addEventListener('click', () => go(-1));
    this.nextBtn.addEventListener('click', () => go(1));
    this.avatar = el('div', { class: 'avatar' });
    this.body = el('div', { class: 'parts' });
    this.typing = el('div', { class: 'typing', 'aria-label': 'working' }, el('i'), el('i'), el('i'));
    // What a real model reports it cost (its usage data parts): a muted
    // footer, not a data card per step.
    this.usage = el('span', { class: 'msg-usage', dataset: { testid: 'usage' } });
    this.usage.hidden = true;
    // The message's actions sit under it, together, as chat apps do.
    this.actions = el('div', { class: 'msg-actions', dataset: { testid: 'message-actions' } }, this.nav, this.editBtn, this.copy, this.regen, this.usage);
    this.el = el(
      'article',
      { class: 'message', dataset: { testid: 'message' } },
      this.avatar,
      el('div', { class: 'bubble' }, el('header', {}, this.who, this.time, this.meta), this.body, this.typing, this.actions),
    );
  }

  /** setLatestError says whether this message's error is the one Retry acts on. */
  setLatestError(latest) {
    if (this.latestError === latest) return;
    this.latestError = latest;
    for (const view of this.parts.values()) view.setLatest?.(latest);
  }

  /** setAlternative shows this position's alternatives ({count, index}), or none. */
  setAlternative(alt) {
    this.alt = alt && alt.count > 1 ? alt : undefined;
    this.nav.hidden = !this.alt;
    if (!this.alt) return;
    setText(this.branchOf, `${this.alt.index + 1} / ${this.alt.count}`);
    this.prevBtn.disabled = this.alt.index <= 0;
    this.nextBtn.disabled = this.alt.index >= this.alt.count - 1;
  }

  #startEdit() {
    const msg = this.msg;
    if (!msg || this.editing) return;
    const text = (msg.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text ?? '').join('\n\n');
    const box = el('textarea', { class: 'edit-box', rows: 3, dataset: { testid: 'edit-input' } });
    box.value = text;
    this.editing = box;
    this.body.hidden = true;
    this.body.after(box);
    const finish = () => {
      box.remove();
      this.body.hidden = false;
      this.editing = null;
    };
    box.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        finish();
      } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        const next = box.value.trim();
        if (!next || next === text.trim()) {
          finish();
          return;
        }
        box.disabled = true;
        Promise.resolve(this.ctx.edit?.(msg, next))
          .then(finish)
          .catch((err) => {
            box.disabled = false;
            this.ctx.toast?.(`Could not edit: ${err?.message ?? err}`, 'bad');
          });
      }
    });
    box.focus();
  }

  /**
   * applyAppends shows a change made only of appended text, in place. It
   * returns false when the change is more than that: render() then shows the
   * message whole (a part view that already took its text finds it equal).
   */
  applyAppends(mc) {
    const old = this.msg;
    if (!old || old.revision !== mc.message.revision || old.parts?.length !== mc.message.parts.length) {
      // More than appends (the last delta and done in one change): the
      // text views still take what their parts grew by, so the render
      // that follows finds each text the one it showed and compares
      // nothing (a 1 MB answer's done text against the shown one: two
      // ropes flattened, ~30 ms in one task).
      for (const pc of mc.parts) {
        if (pc.appended !== undefined) this.parts.get(pc.part.part_id)?.take?.(pc.appended, pc.part);
      }
      return false;
    }
    const views = [];
    for (const pc of mc.parts) {
      const view = pc.appended !== undefined ? this.parts.get(pc.part.part_id) : null;
      if (!view?.append || old.parts[pc.index]?.part_id !== pc.part.part_id) return false;
      views.push([view, pc]);
    }
    for (const [view, pc] of views) {
      if (!view.append(pc.appended, pc.part)) return false;
    }
    this.msg = mc.message;
    return true;
  }

  update(msg) {
    const old = this.msg;
    if (msg === old) return;
    // Done is final: a done message at the revision on screen never changes.
    if (old && msg.revision === old.revision && msg.state === old.state && isDone(old)) {
      this.msg = msg;
      return;
    }
    this.msg = msg;
    const d = this.el.dataset;
    if (!old || old.role !== msg.role) {
      d.role = msg.role;
      this.avatar.replaceChildren(icon(msg.role === 'user' ? 'user' : 'bot'));
      setText(this.who, msg.role === 'user' ? authorName(msg) : 'Agent');
      this.who.dataset.testid = 'message-author';
    }
    d.messageId = msg.message_id;
    if (msg.segment) d.segment = msg.segment; // the part after steer #segment
    else delete d.segment;
    d.sequence = msg.sequence;
    d.revision = msg.revision;
    d.state = msg.role === 'user' ? 'done' : msg.state ?? '';
    toggle(this.el, 'streaming', msg.state === 'streaming');
    toggle(this.el, 'internal', msg.visibility === 'internal');
    // A message holding only actions (a settings change while idle) is a
    // note in the flow, not an agent reply.
    toggle(this.el, 'note-message', isNoteOnly(msg));
    // Formatting a time costs more than the rest of an update: only when it changes.
    if (!old || old.created_at !== msg.created_at) setText(this.time, timeOf(msg.created_at));
    this.copy.hidden = msg.role !== 'agent' || msg.state !== 'done' || !(msg.parts ?? []).some((p) => p.type === 'text' && p.text);
    // A fork keeps at least the first message: the first one is not edited.
    this.editBtn.hidden = !this.ctx.edit || msg.role !== 'user' || msg.visibility === 'internal' || msg.sequence < 2 ||
      !!msg.segment || !(msg.parts ?? []).some((p) => p.type === 'text');
    const debug = [`#${msg.sequence}`, `rev ${msg.revision}`];
    if (msg.visibility === 'internal') debug.push('internal');
    if (msg.state === 'streaming') debug.push('streaming');
    setText(this.meta, debug.join(' · '));
    this.#renderParts(msg);
    this.#renderUsage(msg);
  }

  #renderUsage(msg) {
    const u = msg.role === 'agent' ? usageOf(msg.parts ?? []) : null;
    this.usage.hidden = !u;
    if (!u) return;
    const total = u.input + u.output;
    setText(this.usage, [`${total.toLocaleString('en')} tokens`, ...u.models].join(' · '));
    this.usage.title = `${u.input.toLocaleString('en')} in, ${u.output.toLocaleString('en')} out, over ${u.steps === 1 ? 'one step' : `${u.steps} steps`}`;
  }

  #renderParts(msg) {
    const parts = msg.parts ?? [];
    const asked = questionCalls(parts);
    const seen = new Set();
    let prev = null;
    for (const part of parts) {
      let view = this.parts.get(part.part_id);
      if (!view || view.partType !== part.type) {
        view?.el.remove();
        view = createPartView(part, this.ctx);
        view.partType = part.type;
        view.setLatest?.(!!this.latestError);
        this.parts.set(part.part_id, view);
      }
      view.update(part, msg);
      // One card per question: the question card shows the call that asks it.
      if (part.type === 'tool') view.el.hidden = asked.has(part.tool_call_id);
      seen.add(part.part_id);
      const expected = prev ? prev.nextSibling : this.body.firstChild;
      if (expected !== view.el) this.body.insertBefore(view.el, expected);
      prev = view.el;
    }
    if (seen.size !== this.parts.size) {
      for (const [id, view] of this.parts) {
        if (!seen.has(id)) {
          view.el.remove();
          this.parts.delete(id);
        }
      }
    }
    // The "working" dots show while the agent message is open but nothing in
    // it is visibly streaming (between steps, while a tool runs).
    // Not while the turn waits for the user (a pending interaction).
    const last = parts[parts.length - 1];
    const visiblyStreaming = last && (last.state === 'streaming' || last.state === 'input-streaming');
    const waiting = parts.some((p) => p.type === 'interaction' && p.status === 'pending');
    this.typing.hidden = !(msg.state === 'streaming' && !msg.continued && !visiblyStreaming && !waiting);
  }
}

// retryCandidate is the message whose error a retry would act on (as the
// server's retry finds it): the newest message that is not only actions,
// if it is a done agent message ending with a recoverable error.
function retryCandidate(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isNoteOnly(m)) continue;
    const last = m.parts?.at(-1);
    return m.role === 'agent' && m.state === 'done' && last?.type === 'error' && last.recoverable ? m : null;
  }
  return null;
}

// usageOf sums a reply's usage data parts (one per model step,
// docs/protocol.md §2): tokens in and out, and the models that wrote it.
function usageOf(parts) {
  let input = 0;
  let output = 0;
  let steps = 0;
  const models = [];
  for (const p of parts) {
    if (p.type !== 'data' || p.data_type !== 'usage' || !p.data || typeof p.data !== 'object') continue;
    steps++;
    input += Number(p.data.input_tokens) || 0;
    output += Number(p.data.output_tokens) || 0;
    if (p.data.model && !models.includes(String(p.data.model))) models.push(String(p.data.model));
  }
  return steps ? { input, output, steps, models } : null;
}

/** isNoteOnly: an agent message made of action parts only. */
export function isNoteOnly(msg) {
  const parts = msg.parts ?? [];
  return msg.role === 'agent' && parts.length > 0 && parts.every((p) => p.type === 'action');
}

// questionCalls: the tool_call_ids that a question interaction stands for.
function questionCalls(parts) {
  const ids = new Set();
  for (const p of parts) {
    if (p.type === 'interaction' && p.request?.kind === 'question' && p.request.tool_call_id) ids.add(p.request.tool_call_id);
  }
  return ids;
}

function isDone(msg) {
  return msg.role === 'user' || msg.state === 'done';
}

// authorName is who wrote a user message: "You" for the session's owner
// (whose messages carry no author part), else the member's principal or
// "Guest" for a share link (the agentsync.author data part, protocol §3.3).
function authorName(msg) {
  const a = (msg.parts ?? []).find((p) => p.type === 'data' && p.data_type === 'agentsync.author')?.data;
  if (!a) return 'You';
  if (a.principal) return a.principal;
  return 'Guest';
}
