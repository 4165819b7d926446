// The view patcher: the host's render-friendly copy of the view, patched
// with what the core says changed (protocol §7.4) instead of decoded whole
// per delta, and the change events that tell a renderer what to redraw.
// It knows nothing of sockets or timers: it is fed takes of changes (or a
// compact answer) and the status, and can be tested by feeding it frames
// through a core with no server.

import { EMPTY_VIEW } from './empty-view.js';

// The length at which the tail of a streamed text joins its head (appendToPart).
const TAIL_CHUNK = 256;

/** The patched copy of one session's view. */
export class ViewPatcher {
  /**
   * @param {string} sessionId
   * @param {Map<string, Set<Function>>} handlers the session's event
   *   handlers: change events are built only when someone listens
   * @param {(messageId: string) => void} onUnknown called with the id of a
   *   patched message this copy lacks (a host bug: the owner rebuilds)
   */
  constructor(sessionId, handlers, onUnknown) {
    this.sessionId = sessionId;
    this.handlers = handlers;
    this.onUnknown = onUnknown;
    /** The current view; never modified once handed out. */
    this.view = { ...EMPTY_VIEW, session_id: sessionId };
    /** The status the next view carries (the session's). */
    this.status = 'idle';
    this.index = new Map(); // message_id -> position in view.messages
    this.bases = new Map(); // message_id -> the objects appends copy (appendToPart)
    this.lastBase = null; // the entry of bases the last append used
    /** A rebuilt core is not live yet: keep the old messages until it is. */
    this.recovering = false;
    this.pendingChanges = []; // change events not yet emitted, oldest first
  }

  /** Whether the view's status is behind this.status. */
  get statusBehind() {
    return this.view.status !== this.status;
  }

  /** A new view with the current status (nothing else changed); false if it had it. */
  restatus() {
    if (!this.statusBehind) return false;
    this.view = { ...this.view, status: this.status };
    return true;
  }

  /** The change events queued since the last take, oldest first. */
  takeChanges() {
    const changes = this.pendingChanges;
    if (changes.length > 0) this.pendingChanges = [];
    return changes;
  }

  // Patches the view with one take of changes (ABI v2, protocol §7.4): text
  // that grew is appended to the held part, so a delta costs its own size
  // whatever the message's length. A changed message (and part) is a new
  // object; every other keeps its identity. `ch` is a Changes, or the
  // appends form of core.handleChanges. Returns whether anything changed.
  apply(ch) {
    if (this.recovering) {
      // A rebuilt core starts empty: the old messages stay until it is
      // live, when its snapshot arrives as a reset.
      if (ch.status !== 'live') return this.restatus();
      this.recovering = false;
    }
    const old = this.view;
    const appends = ch.appends;
    const changed = appends ? appends.length > 0 : ch.reset || ch.messages.length > 0;
    if (!changed && old.status === this.status && old.total === (ch.total ?? 0) &&
        old.has_more_older === !!ch.has_more_older && old.loading_older === !!ch.loading_older &&
        old.include_internal === !!ch.include_internal && (old.next_before_sequence ?? 0) === (ch.next_before_sequence ?? 0)) {
      return false; // nothing a reader can see changed: the view keeps its identity
    }
    if (appends && changed) return this.applyAppends(ch, old.messages);
    let messages = old.messages;
    const change = { reset: !!ch.reset, messages: [] };
    if (appends) {
      // nothing appended: only the scalars below changed
    } else if (ch.reset) {
      this.bases.clear();
      this.lastBase = null;
      messages = ch.messages.map((mc) => mc.message);
      this.index = new Map(messages.map((m, i) => [m.message_id, i]));
      for (const m of messages) change.messages.push(wholeChange(m));
    } else if (ch.messages.length > 0) {
      messages = messages.slice();
      for (const mc of ch.messages) {
        const at = this.index.get(mc.message_id);
        // Its appends start from the new object: the old base (and text)
        // is let go.
        this.bases.delete(mc.message_id);
        this.lastBase = null;
        if (mc.message) {
          if (mc.kept_texts && !keepTexts(at === undefined ? null : messages[at], mc)) return this.unknown(mc.message_id);
          if (at === undefined) {
            insertBySequence(messages, mc.message);
            this.index = new Map(messages.map((m, i) => [m.message_id, i])); // positions after it shifted
          } else {
            messages[at] = mc.message;
          }
          change.messages.push(wholeChange(mc.message));
        } else if (at !== undefined) {
          const patched = patchMessage(messages[at], mc);
          if (patched === null) return this.unknown(mc.message_id);
          const { message, parts } = patched;
          messages[at] = message;
          change.messages.push({ message_id: mc.message_id, message, parts });
        } else {
          return this.unknown(mc.message_id);
        }
      }
    }
    this.setView(messages, ch);
    if (change.reset || change.messages.length > 0) this.pushChange(change);
    return true;
  }

  // apply for the appends form, the take of almost every delta: text
  // appended to held parts, and nothing else built than what a reader gets
  // (the change event only for someone to hear it).
  applyAppends(ch, held) {
    const appends = ch.appends;
    const messages = held.slice();
    const told = this.handlers.get('change')?.size > 0;
    let change = null;
    for (let k = 0; k < appends.length; k += 3) {
      const at = this.index.get(appends[k]);
      if (at === undefined) return this.unknown(appends[k]);
      const index = appends[k + 1];
      const appended = appends[k + 2];
      const message = this.appendToPart(messages[at], index, appended);
      messages[at] = message;
      if (told) {
        change ??= { reset: false, messages: [] };
        change.messages.push({ message_id: message.message_id, message, parts: [{ index, part: message.parts[index], appended }] });
      }
    }
    this.setView(messages, ch);
    if (change !== null) this.pushChange(change);
    return true;
  }

  // apply for a compact answer (core.handleCompact): text appended to one
  // part of the message the last take appended to; the scalars as they were.
  applyCompact(core) {
    const id = core.compactId;
    const at = this.index.get(id);
    if (at === undefined) return this.unknown(id);
    const old = this.view;
    const messages = old.messages.slice();
    const index = core.compactIndex;
    const appended = core.compactText;
    const message = this.appendToPart(messages[at], index, appended);
    messages[at] = message;
    const view = {
      session_id: this.sessionId,
      status: this.status,
      messages,
      total: old.total,
      has_more_older: old.has_more_older,
      loading_older: old.loading_older,
      include_internal: old.include_internal,
    };
    if (old.next_before_sequence) view.next_before_sequence = old.next_before_sequence;
    this.view = view;
    if (this.handlers.get('change')?.size > 0) {
      this.pushChange({ reset: false, messages: [{ message_id: id, message, parts: [{ index, part: message.parts[index], appended }] }] });
    }
    return true;
  }

  // A new view: these messages and the scalars of a take of changes.
  setView(messages, ch) {
    const view = {
      session_id: this.sessionId,
      status: this.status,
      messages,
      total: ch.total ?? 0,
      has_more_older: !!ch.has_more_older,
      loading_older: !!ch.loading_older,
      include_internal: !!ch.include_internal,
    };
    if (ch.next_before_sequence) view.next_before_sequence = ch.next_before_sequence;
    this.view = view;
  }

  // held with text appended to part i: a new message, parts array and
  // part; the other parts are shared with the previous view. Two costs of
  // the obvious `{...held, parts}` are avoided (each about as dear as the
  // rest of a delta):
  //   - The copies are spread from the objects a run of appends started
  //     from (bases), not from the previous delta's copies: V8 spreads one
  //     object over and over fast, a copy of a copy of a copy several times
  //     slower. Appends change nothing but text, so a base's other fields
  //     are the held ones.
  //   - The text is head + tail, the tail a flat string of the last few
  //     deltas rebuilt on each: `text + delta` would keep two small strings
  //     alive per delta (the delta and a cons string), and V8's young
  //     collector pays for every object that survives it. The head takes
  //     the tail once it is TAIL_CHUNK long.
  appendToPart(held, i, text) {
    let b = this.lastBase;
    if (b === null || b.message !== held) {
      b = this.bases.get(held.message_id);
      if (b === undefined || b.message !== held) {
        b = { message: held, base: held, parts: [] };
        this.bases.set(held.message_id, b);
      }
      this.lastBase = b;
    }
    const parts = held.parts.slice();
    const cur = parts[i];
    let s = b.parts[i];
    if (s === undefined || s.made !== cur) s = b.parts[i] = { base: null, made: cur, head: cur.text ?? '', tail: '' };
    const tail = s.tail === '' ? text : [s.tail, text].join(''); // join builds a flat string
    let full;
    if (tail.length >= TAIL_CHUNK) {
      full = s.head = s.head + tail;
      s.tail = '';
    } else {
      s.tail = tail;
      full = s.head + tail;
    }
    // The base is the first copy, not the held part: a part that streams
    // starts without text (an empty field is left out), and a spread that
    // adds a field is the slow kind too. The text is assigned after the
    // spread, not written in it: `{ ...base, text }` redefines a field the
    // clone has, which V8 does not cache (the store missed its inline cache
    // on every delta, about 0.3 us).
    const part = { ...(s.base ?? cur) };
    part.text = full;
    if (s.base === null) s.base = part;
    s.made = part;
    parts[i] = part;
    const message = { ...b.base, parts };
    b.message = message;
    return message;
  }

  // A patch of a message this copy lacks: a host bug. The owner starts
  // over (a rebuild); nothing is patched.
  unknown(id) {
    this.onUnknown(id);
    return false;
  }

  // Queues a change event for the next notification. Text appended to
  // parts that the queued one appended to too is merged into it, so a
  // flush that spans several takes tells of them once; anything else (a
  // part or message taken whole) is an event of its own, so a renderer
  // appends what it can and redraws only what it must.
  pushChange(change) {
    const pending = this.pendingChanges;
    if (change.reset) pending.length = 0;
    const last = pending.length > 0 ? pending[pending.length - 1] : undefined; // [-1] is a slow named lookup
    if (!change.reset && last && !last.reset && appendsOnlyTo(last, change)) mergeAppends(last, change);
    else if (change.reset || change.messages.length > 0) pending.push(change);
  }
}

// A committed revision of a held message comes whole but for the beginning
// of the texts the host holds (kept_texts, protocol §7.4): each part named
// takes the held part's text (same id) followed by the rest it carries; a
// text that did not change is then the held string itself, so a renderer
// that compares texts finds them equal at once. Returns false when the
// held message or a part is missing (a host bug).
function keepTexts(held, mc) {
  if (held === null) return false;
  const parts = mc.message.parts;
  for (const id of mc.kept_texts) {
    const from = held.parts.find((p) => p.part_id === id);
    const to = parts.findIndex((p) => p.part_id === id);
    if (from === undefined || to < 0) return false;
    parts[to].text = (from.text ?? '') + (parts[to].text ?? ''); // a part just decoded, nobody else's
  }
  return true;
}

// The change record of a message taken whole: every part, none appended.
/** The MessageChange that gives message whole (a new message, or a reset). */
export function wholeChange(message) {
  return { message_id: message.message_id, message, parts: message.parts.map((part, index) => ({ index, part })) };
}

// A held message patched with a MessageChange: a new message object and a
// new parts array; a part replaced or grown is a new object, the others are
// shared with the previous view. Null for a kept text of a part the held
// message lacks (a host bug). Text grows by concatenation, which V8 makes
// without copying the text held.
function patchMessage(held, mc) {
  const parts = held.parts.slice();
  const changed = [];
  for (const pc of mc.parts ?? []) {
    if (pc.kept_text) {
      // The part continues the held one's text, which is not sent again.
      if (pc.index >= parts.length) return null;
      pc.part.text = (parts[pc.index].text ?? '') + (pc.part.text ?? ''); // a part just decoded, nobody else's
    }
    parts[pc.index] = pc.part;
    changed.push({ index: pc.index, part: pc.part });
  }
  for (const a of mc.appends ?? []) {
    const p = parts[a.index];
    const part = { ...p, text: (p.text ?? '') + a.text };
    parts[a.index] = part;
    changed.push({ index: a.index, part, appended: a.text });
  }
  return { message: { ...held, parts }, parts: changed };
}

// appendsOnlyTo reports whether every part of change `next` only had text
// appended, to a part whose change in `prev` is an append too (or is not in
// prev at all).
function appendsOnlyTo(prev, next) {
  for (const nm of next.messages) {
    const pm = prev.messages.find((m) => m.message_id === nm.message_id);
    for (const np of nm.parts) {
      if (np.appended === undefined) return false;
      const pp = pm?.parts.find((x) => x.index === np.index);
      if (pp && pp.appended === undefined) return false;
    }
  }
  return true;
}

// Folds the appends of `next` into `prev` (queued, not yet emitted): per
// message and part the newest object, with the text appended by both.
function mergeAppends(prev, next) {
  for (const nm of next.messages) {
    const pm = prev.messages.find((m) => m.message_id === nm.message_id);
    if (!pm) {
      prev.messages.push(nm);
      continue;
    }
    pm.message = nm.message;
    for (const np of nm.parts) {
      const pp = pm.parts.find((x) => x.index === np.index);
      if (!pp) pm.parts.push(np);
      else {
        pp.appended += np.appended;
        pp.part = np.part;
      }
    }
  }
}

// Inserts m into messages (ordered by sequence).
function insertBySequence(messages, m) {
  let i = messages.length;
  while (i > 0 && messages[i - 1].sequence > m.sequence) i--;
  messages.splice(i, 0, m);
}
