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
// Once the part is done the whole text is rendered once more in one pass,
// so the final DOM is exactly what a full parse gives (lists that turned
// loose, reference links). Everything goes through DOMPurify: a model's
// output is untrusted, and no <script>, event handler or javascript: link
// ever reaches the DOM.
//
// Feeding: set(text, streaming) finds the appended suffix itself (the host
// keeps the old string; comparing is a memcmp). append(suffix) takes a known
// suffix directly (the host's `change` event `appended` field).

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
const HIGHLIGHT_LIMIT = 20000; // longer code blocks stay plain: highlighting them would stall a frame

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
    this.source = '';
    this.lastChar = ''; // source's last character
    this.settledEnd = 0; // source[0:settledEnd] is rendered in settled blocks
    this.plain = null; // StreamText showing a huge open block as plain text
    this.streaming = false;
    this.stats = { tailRenders: 0, tailChars: 0, fullRenders: 0, lexedChars: 0 };
  }

  /** set shows text; while streaming an extension of the shown text is appended. */
  set(text, streaming) {
    const value = text ?? '';
    if (streaming && this.streaming && value.length >= this.source.length && value.startsWith(this.source)) {
      if (value.length > this.source.length) this.append(value.slice(this.source.length));
      return;
    }
    if (!streaming && !this.streaming && value === this.source && this.rendered) return;
    if (!streaming && this.streaming && value.length > FULL_PARSE_LIMIT && value.startsWith(this.source)) {
      this.#finish(value);
      return;
    }
    this.#reset(value, streaming);
  }

  /** append adds suffix to an open (streaming) text. */
  append(suffix) {
    // The open text's last character: whether a blank line ends at the joint.
    const before = this.source.length > this.settledEnd ? this.lastChar : '';
    this.source += suffix;
    if (suffix) this.lastChar = suffix[suffix.length - 1];
    if (this.plain) {
      // Appended, not set again: a huge open block costs the delta, not its length.
      this.plain.append(suffix);
      // Only a blank line can close a block: re-lex only then. (Looked for
      // in the suffix alone: slicing the grown source would flatten it, a
      // copy of the whole text per append.)
      if (!suffix.includes('\n\n') && !(before === '\n' && suffix[0] === '\n')) return;
    }
    this.#renderOpen();
  }

  // finish closes a long streamed text: what is left open is rendered as
  // its last blocks, the settled ones are kept.
  #finish(text) {
    this.source = text;
    this.lastChar = text.at(-1) ?? '';
    this.streaming = false;
    this.stats.finishRenders = (this.stats.finishRenders ?? 0) + 1;
    const rest = text.slice(this.settledEnd);
    if (this.plain && rest.length > FULL_PARSE_LIMIT) {
      // One block longer than a full parse is worth (a model that never
      // breaks its paragraphs): it stays the plain text it streamed as.
      if (this.plain.shown !== rest) this.plain.set(rest, false); // already shown: nothing to redo
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
    this.plain.set(this.source.slice(this.settledEnd), true);
  }

  #renderOpen() {
    const open = this.source.slice(this.settledEnd);
    // A long open text without a blank line is shown plain without lexing
    // it, as append() keeps it until a blank line comes: lexing a 50 KB
    // paragraph costs a frame or more, and a stream's first view or a
    // snapshot re-read can hold that much at once.
    if (open.length > OPEN_LIMIT && !open.includes('\n\n')) {
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
