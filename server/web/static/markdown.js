// MarkdownView shows an agent's text part as sanitized markdown while it
// streams, without re-parsing the whole message per delta.
//
// The text is split in two: the *settled* blocks (paragraphs, lists, code
// blocks the stream has moved past: rendered once, never touched again) and
// the *open* tail (the block still growing, re-rendered alone per frame).
// After each append only the open tail is lexed; when it holds more than one
// block, every block but the last is settled. The cost of a delta is
// therefore bounded by the open block, not by the message.
//
// A single block can still grow huge (a 100,000-character paragraph with no
// blank line). Past OPEN_LIMIT characters the open tail is shown as plain
// appended text (StreamText) instead, so a frame never re-renders more than
// OPEN_LIMIT characters; it becomes markdown again once a blank line closes
// the block, or the part is done.
//
// Once the part is done a text of up to FULL_PARSE_LIMIT characters is
// rendered once more in one pass, so the final DOM is exactly what a full
// parse gives (lists that turned loose, reference links); a longer one keeps
// its settled blocks and only its open tail is rendered.
//
// No task does work in proportion to the whole text: a long text that
// arrives at once (a page load, a snapshot re-read after a resync, the rest
// of an answer when it is done) is fed through the same streaming path a
// slice at a time, in tasks of a few milliseconds (#feed).
//
// Everything goes through DOMPurify: a model's output is untrusted, and no
// <script>, event handler or javascript: link ever reaches the DOM.
//
// Feeding: set(text, streaming, same) finds the appended suffix itself by
// comparing with the text shown (which flattens both strings: a copy of a
// long text), unless the caller says it is the text it gave last (same).
// append(suffix) takes a known suffix directly (the host's `change` event
// `appended` field).

import { Marked } from './vendor/marked.esm.js';
import DOMPurify from './vendor/purify.es.mjs';
import hljs from './vendor/highlight.min.js';
import { StreamText } from './stream-text.js';
import { el, copyText } from './util.js';

const OPEN_LIMIT = 4096;
// A streamed answer longer than this is not parsed again in full when it
// is done: the blocks it settled while streaming stay, and only the open
// one is rendered. A full parse of a 1 MB answer holds the main thread for
// hundreds of milliseconds; below this size it costs a few.
const FULL_PARSE_LIMIT = 32 * 1024;
const FENCE = /^ {0,3}(?:```|~~~)/; // a fenced code block's opening line
const HIGHLIGHT_LIMIT = 20000; // longer code blocks stay plain: highlighting them would stall a frame
// A text longer than FIRST_SLICE that arrives at once (page load, a
// snapshot re-read, a reconnect mid-stream) is fed a slice at a time, in
// tasks of about TASK_MS: lexing and laying out 1 MB in one task holds the
// main thread for most of a second. A slice's size adapts to what the text
// costs: 16 KB of dense markdown takes 30-40 ms to sanitize, 16 KB of
// plain prose well under one, so each slice aims at SLICE_MS (growing at
// most twofold: the text further on may cost more).
const FIRST_SLICE = 4096;
const MIN_SLICE = 512;
const MAX_SLICE = 16 * 1024; // the worst slice: 16 KB of dense markdown
const SLICE_MS = 2;
const TASK_MS = 6;
const TASK_CHARS = 128 * 1024; // and no more per task: what a task adds is laid out in it
/** sliceStats counts, page-wide, the tasks (drains) and slices fed later; read by tests. */
export const sliceStats = { drains: 0, slices: 0, chars: 0 };

const md = new Marked({ gfm: true, breaks: false });

// Links open in a new tab and never pass the page as opener; anything that
// is not http(s), mailto or a fragment is removed by DOMPurify's URI check.
// Classes are the page's styling hooks: only a code block's language-*
// survives, so a message cannot dress itself as a page element.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
  if (node.hasAttribute('class')) {
    const lang = node.tagName === 'CODE' ? /(?:^|\s)(language-[\w+#.-]+)/.exec(node.getAttribute('class'))?.[1] : null;
    if (lang) node.setAttribute('class', lang);
    else node.removeAttribute('class');
  }
});

const PURIFY = {
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe'],
  FORBID_ATTR: ['style', 'id'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/(?!\/))/i,
  RETURN_DOM_FRAGMENT: true,
};

/** renderMarkdown turns markdown into a sanitized DocumentFragment. */
export function renderMarkdown(source, tokens = md.lexer(source)) {
  const frag = DOMPurify.sanitize(md.parser(tokens), PURIFY);
  decorate(frag);
  return frag;
}

// The first lex of a page compiles marked's regular expressions (V8
// compiles a regular expression to machine code on its first long
// subject), and the first sanitize and highlight warm DOMPurify and
// highlight.js: 40-70 ms, once, that would land in the first frame of the
// page's first answer. Paid while the page is idle after loading instead,
// one sample per idle callback so that no one of them is a long task.
const LOREM = 'lorem ipsum dolor sit amet café naïve über '.repeat(40); // one long run of plain text
const WARM_UP = [
  ...['# a', '- g\n1. h', '> i', '| j | k |\n|---|---|\n| l | m |', '```js\nn\n```', 'o\n---', `${LOREM}\n\n${LOREM}`].map((s) => () => md.lexer(s)),
  () => DOMPurify.sanitize('<p>a</p>', PURIFY),
  () => md.parser(md.lexer(`b **c** _d_ \`e\` [f](https://example.com) ${LOREM}`)),
  () => hljs.highlight('const n = 1;', { language: 'js', ignoreIllegals: true }),
  ...[`b **c** _d_ \`e\` [f](https://example.com) ${LOREM}`, '```js\nconst n = 1;\n```', '| j | k |\n|---|---|\n| l | m |\n\n- g\n\n> i'].map((s) => () => renderMarkdown(s)),
];
// When it is done, <html data-warm="done"> says so (the page bench waits
// for it: the warm-up is the page's idle time, not its answer's).
function warmUp(i) {
  WARM_UP[i]();
  if (i + 1 < WARM_UP.length) requestIdleCallback(() => warmUp(i + 1));
  else document.documentElement.dataset.warm = 'done';
}
if (globalThis.requestIdleCallback) requestIdleCallback(() => warmUp(0));

// decorate adds what plain HTML lacks: highlighted code with a header (its
// language and a Copy button), and a scroll box around wide tables.
function decorate(root) {
  // The serializer's newlines between blocks are not text of the message.
  for (const node of [...root.childNodes]) {
    if (node.nodeType === Node.TEXT_NODE && !node.data.trim()) node.remove();
  }
  for (const pre of root.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    if (!code) continue;
    const lang = /(?:^|\s)language-([\w+#.-]+)/.exec(code.getAttribute('class') ?? '')?.[1] ?? '';
    const text = code.textContent;
    if (text.length <= HIGHLIGHT_LIMIT) {
      const known = lang && hljs.getLanguage(lang);
      // hljs escapes the text it wraps in spans: its output is safe HTML.
      code.innerHTML = known ? hljs.highlight(text, { language: lang, ignoreIllegals: true }).value : escapeHTML(text);
      code.classList.add('hljs');
    }
    const copy = el('button', { type: 'button', class: 'copy', dataset: { testid: 'copy-code' }, text: 'Copy' });
    const box = el('div', { class: 'codeblock', dataset: { testid: 'code-block', lang } },
      el('div', { class: 'codeblock-head' }, el('span', { class: 'lang', text: lang || 'text' }), copy));
    pre.replaceWith(box);
    box.append(pre);
  }
  for (const table of root.querySelectorAll('table')) {
    const wrap = el('div', { class: 'table-wrap' });
    table.replaceWith(wrap);
    wrap.append(table);
  }
}

// sliceLength is how much of text the next slice takes: max characters,
// one less when that would split a surrogate pair.
function sliceLength(text, max) {
  if (text.length <= max) return text.length;
  const c = text.charCodeAt(max - 1);
  return c >= 0xd800 && c <= 0xdbff ? max - 1 : max;
}

// Backlog is the text still to be fed (MarkdownView.#feed), kept as the
// chunks it arrived in: appending to one string made a rope that the next
// slice's charCodeAt flattened, a copy of the whole backlog per slice (the
// page bench's sliceLength, with a 1 MB answer arriving faster than it is
// laid out).
class Backlog {
  constructor(promise, resolve) {
    this.chunks = [];
    this.first = 0; // chunks before it are taken
    this.head = 0; // chunks[first][0:head] is taken
    this.length = 0; // characters not taken
    this.done = false;
    this.promise = promise;
    this.resolve = resolve;
  }

  push(text) {
    if (!text) return;
    this.chunks.push(text);
    this.length += text.length;
  }

  // peek is the next n characters at most, not taken.
  peek(n) {
    let out = '';
    for (let i = this.first, at = this.head; i < this.chunks.length && out.length < n; i++, at = 0) {
      out += this.chunks[i].slice(at, at + n - out.length);
    }
    return out;
  }

  // take takes the next max characters at most, one less when that would
  // split a surrogate pair (sliceLength; max is at least MIN_SLICE).
  take(max) {
    const ahead = this.peek(max + 1);
    const piece = ahead.slice(0, sliceLength(ahead, max));
    let n = piece.length;
    this.length -= n;
    while (n > 0) {
      const left = this.chunks[this.first].length - this.head;
      if (n < left) {
        this.head += n;
        break;
      }
      n -= left;
      this.chunks[this.first++] = undefined;
      this.head = 0;
    }
    if (this.first > 1024 && this.first * 2 > this.chunks.length) {
      // Drop the taken chunks now and then, not one by one (shift copies
      // the array: thousands of small deltas queued would cost their square).
      this.chunks = this.chunks.slice(this.first);
      this.first = 0;
    }
    return piece;
  }

  // text is the whole of what is not taken (a comparison in set).
  text() {
    return this.peek(this.length);
  }
}

// nextTask runs fn in a task of its own, after the browser has had the
// chance to paint and handle input: scheduler.postTask where there is one.
function nextTask(fn) {
  if (globalThis.scheduler?.postTask) globalThis.scheduler.postTask(fn);
  else setTimeout(fn, 0);
}

function escapeHTML(s) {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

// One listener for every code block's Copy button on the page.
document.addEventListener('click', (e) => {
  const btn = e.target instanceof Element ? e.target.closest('.codeblock .copy') : null;
  if (btn) copyText(btn, btn.closest('.codeblock').querySelector('code')?.textContent ?? '');
});

export class MarkdownView {
  constructor(testid) {
    this.el = el('div', { class: 'text markdown', dataset: { testid } });
    this.tail = el('div', { class: 'md-open' });
    this.el.append(this.tail);
    this.source = ''; // the text rendered so far
    this.lastChar = ''; // source's last character
    this.settledEnd = 0; // source[0:settledEnd] is rendered in settled blocks
    this.plain = null; // StreamText showing a huge open block as plain text
    this.streaming = false;
    // Text still to be fed in later tasks (a long text that arrived at
    // once); null when everything is rendered.
    this.backlog = null;
    this.sliceChars = FIRST_SLICE; // the next slice's size, adapted to the text's cost
    this.stats = { tailRenders: 0, tailChars: 0, fullRenders: 0, lexedChars: 0 };
  }

  /**
   * set shows text; while streaming an extension of the shown text is
   * appended. same says the caller knows text is what it gave last (set
   * or append): a long text is then not compared with the one shown.
   */
  set(text, streaming, same = false) {
    const value = text ?? '';
    // What the view is showing or about to: its length, and the text
    // itself only for a comparison the caller did not spare.
    const shownLength = this.source.length + (this.backlog?.length ?? 0);
    const shown = () => (this.backlog ? this.source + this.backlog.text() : this.source);
    if (streaming && this.streaming && !this.backlog?.done && (same || (value.length >= shownLength && value.startsWith(shown())))) {
      if (value.length > shownLength) this.append(value.slice(shownLength));
      return;
    }
    if (!streaming && (same || value === shown()) && (this.backlog?.done || (!this.streaming && this.rendered))) return;
    if (!streaming && this.streaming && value.length > FULL_PARSE_LIMIT && (same || value.startsWith(shown()))) {
      // A long text is done: what it streamed stays, the rest is appended
      // (in slices if it is long: a snapshot re-read after a resync).
      const rest = value.slice(shownLength);
      if (this.backlog || rest.length > FIRST_SLICE) {
        this.#feed(rest, true);
        return;
      }
      if (rest) this.#appendNow(rest);
      this.#finish(value);
      return;
    }
    if (value.length > (streaming ? FIRST_SLICE : FULL_PARSE_LIMIT)) {
      // A long text shown from scratch (page load, a resync, a reconnect):
      // fed as if it streamed, a slice at a time, so no task lexes or lays
      // out the whole of it; the first slice now, so the part is not empty
      // meanwhile. A done one ends as a long streamed text does (#finish).
      this.#reset('', true);
      this.sliceChars = FIRST_SLICE;
      const first = sliceLength(value, FIRST_SLICE);
      this.#feed(value.slice(first), !streaming);
      this.#appendNow(value.slice(0, first));
      return;
    }
    this.#reset(value, streaming);
  }

  /** append adds suffix to an open (streaming) text. */
  append(suffix) {
    if (this.backlog || suffix.length > FIRST_SLICE) this.#feed(suffix, false);
    else this.#appendNow(suffix);
  }

  /** whenRendered resolves once no text waits to be fed in a later task. */
  whenRendered() {
    return this.backlog ? this.backlog.promise : Promise.resolve();
  }

  #appendNow(suffix) {
    // The open text's last character: whether a blank line ends at the joint.
    const before = this.source.length > this.settledEnd ? this.lastChar : '';
    // Only a blank line can close a block. (Looked for in the suffix alone:
    // slicing the grown source would flatten it, a copy of the whole text
    // per append.)
    const blank = before === '\n' && suffix[0] === '\n' ? 0 : suffix.indexOf('\n\n');
    if (this.plain && blank >= 0 && this.plain.shown.length + blank > FULL_PARSE_LIMIT && !FENCE.test(this.plain.shown.slice(0, 8))) {
      this.#settlePlain(suffix.slice(0, blank));
      if (blank < suffix.length) this.#appendNow(suffix.slice(blank));
      else this.#renderOpen();
      return;
    }
    this.source += suffix;
    if (suffix) this.lastChar = suffix[suffix.length - 1];
    if (this.plain) {
      // Appended, not set again: a huge open block costs the delta, not its length.
      this.plain.append(suffix, !this.feeding);
      if (blank < 0) return; // the block goes on: nothing to re-lex
    }
    this.#renderOpen();
  }

  // settlePlain closes a plain open block longer than a full parse is
  // worth (a paragraph of 100 KB, a log pasted whole) at the blank line
  // that ends it: it stays the plain text it streamed as, the very nodes,
  // and the text after the blank line starts a new open block. Lexing it
  // as markdown now would cost its whole length in one task, and laying
  // out one paragraph of 1 MB most of a second. (Not a fenced code block:
  // a blank line does not end one.)
  #settlePlain(last) {
    this.plain.append(last);
    this.source += last;
    if (last) this.lastChar = last[last.length - 1];
    this.tail.before(this.plain.el);
    this.settledEnd = this.source.length;
    this.plain = null;
  }

  // feed queues text to append (then finish the part when done) and
  // renders it in later tasks, a slice at a time (#drain), so the page
  // paints and handles input between them however long the text is.
  // The task that brought the text (a host render, often with a long
  // decode of its own) adds none of it.
  #feed(text, done) {
    if (!this.backlog) {
      let resolve;
      const promise = new Promise((r) => { resolve = r; });
      const backlog = new Backlog(promise, resolve);
      this.backlog = backlog;
      this.el.dataset.rendering = '';
      nextTask(() => this.#drain(backlog));
    }
    this.backlog.push(text);
    this.backlog.done ||= done;
  }

  // drain renders up to TASK_CHARS characters of the backlog, in slices,
  // for at most about TASK_MS; the rest goes to the next task.
  #drain(backlog) {
    if (!backlog || this.backlog !== backlog) return; // reset since: a newer text owns the view
    const start = performance.now();
    let fed = 0;
    sliceStats.drains++;
    let now = start;
    do {
      const piece = backlog.take(this.sliceChars);
      const n = piece.length;
      fed += n;
      sliceStats.slices++;
      sliceStats.chars += n;
      this.feeding = true; // not a stream's delta: a plain block does not balance its chunks
      this.#appendNow(piece);
      this.feeding = false;
      const took = performance.now() - now;
      now += took;
      this.sliceChars = Math.min(MAX_SLICE, 2 * n, Math.max(MIN_SLICE, Math.round((n * SLICE_MS) / Math.max(took, 0.05))));
    } while (backlog.length && fed < TASK_CHARS && now - start < TASK_MS);
    if (backlog.length) {
      nextTask(() => this.#drain(backlog));
    } else {
      this.backlog = null;
      delete this.el.dataset.rendering;
      if (backlog.done) this.#finish(this.source);
      backlog.resolve();
    }
  }

  #dropBacklog() {
    if (!this.backlog) return;
    const { resolve } = this.backlog;
    this.backlog = null;
    delete this.el.dataset.rendering;
    resolve();
  }

  // finish closes a long streamed text: what is left open is rendered as
  // its last blocks, the settled ones are kept.
  #finish(text) {
    this.source = text;
    this.lastChar = text.at(-1) ?? '';
    this.streaming = false;
    this.rendered = true;
    this.stats.finishRenders = (this.stats.finishRenders ?? 0) + 1;
    const rest = text.slice(this.settledEnd);
    if (this.plain && rest.length > FULL_PARSE_LIMIT) {
      // One block longer than a full parse is worth (a model that never
      // breaks its paragraphs): it stays the plain text it streamed as.
      // It shows a prefix of rest: compared by length (comparing the
      // strings would flatten a 1 MB rope of appends, tens of ms).
      if (this.plain.shown.length !== rest.length) this.plain.set(rest, false);
      this.settledEnd = text.length;
      this.plain = null;
      return;
    }
    this.plain = null;
    this.tail.replaceChildren();
    this.tail.before(renderMarkdown(rest));
    this.settledEnd = text.length;
  }

  #reset(text, streaming) {
    this.#dropBacklog();
    this.source = text;
    this.lastChar = text.at(-1) ?? '';
    this.streaming = streaming;
    this.settledEnd = 0;
    this.plain = null;
    this.rendered = true;
    if (!streaming) {
      // Done: one full parse, the final DOM.
      this.stats.fullRenders++;
      this.tail.replaceChildren();
      this.el.replaceChildren(renderMarkdown(text), this.tail);
      return;
    }
    this.el.replaceChildren(this.tail);
    this.#renderOpen();
  }

  // showPlain shows the open block as plain appended text (a StreamText).
  #showPlain() {
    if (!this.plain) {
      this.plain = new StreamText('md-plain');
      this.tail.replaceChildren(this.plain.el);
    }
    this.plain.set(this.source.slice(this.settledEnd), true, false, !this.feeding);
  }

  // runsOn: the open block is known to grow past OPEN_LIMIT without a
  // blank line, from the text still to be fed (#feed).
  #runsOn(open) {
    const ahead = this.backlog?.peek(OPEN_LIMIT) ?? '';
    return open.length + ahead.length > OPEN_LIMIT && !ahead.includes('\n\n') && !(open.endsWith('\n') && ahead.startsWith('\n'));
  }

  #renderOpen() {
    const open = this.source.slice(this.settledEnd);
    // A long open text without a blank line is shown plain without lexing
    // it, as append() keeps it until a blank line comes: lexing a 50 KB
    // paragraph costs a frame or more, and a stream's first view or a
    // snapshot re-read can hold that much at once.
    if (!open.includes('\n\n') && (open.length > OPEN_LIMIT || this.#runsOn(open))) {
      this.#showPlain();
      return;
    }
    this.stats.lexedChars += open.length;
    const tokens = md.lexer(open);
    let k = tokens.length - 1;
    while (k > 0 && tokens[k].type === 'space') k--;
    // An indented last block may still belong to the one before (a list
    // item's continuation): keep both open.
    if (k > 0 && /^[ \t]/.test(tokens[k].raw)) k--;
    if (k > 0) {
      const done = tokens.slice(0, k);
      const raw = done.map((t) => t.raw).join('');
      if (open.startsWith(raw)) {
        this.tail.before(renderMarkdown(raw, done));
        this.settledEnd += raw.length;
        tokens.splice(0, k);
      }
    }
    const rest = this.source.length - this.settledEnd;
    if (rest > OPEN_LIMIT) {
      this.#showPlain();
      return;
    }
    this.plain = null;
    this.stats.tailRenders++;
    this.stats.tailChars += rest;
    this.tail.replaceChildren(renderMarkdown(this.source.slice(this.settledEnd), tokens));
  }
}
