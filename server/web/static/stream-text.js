// StreamText shows a text that grows by appends (a streaming text or
// reasoning part) without ever re-setting what is already on screen.
//
// Why: a 100,000-character answer arrives as ~2,000 deltas. Replacing the
// whole text each time costs O(length) in DOM work per delta; instead the new
// suffix is appended to the last text node. The text is also cut into block
// "chunks" once a chunk passes CHUNK characters, so the browser lays out only
// the last chunk per frame instead of the whole answer (one 100,000-character
// paragraph cost tens of milliseconds of layout per frame). A chunk ends
// after a line break when one comes soon, otherwise after a space: a break or
// a space ending a block shows nothing under `white-space: pre-wrap` (at worst
// one line ends a little early), and textContent stays exactly the text.
// Once the part is done the chunks are joined again, unless the text is
// longer than JOIN_LIMIT: laying out a 1 MB paragraph as one block holds
// the main thread for most of a second, so a long text stays in chunks, the
// very nodes it streamed into (no reflow when it is done), and a done text
// that extends what is shown (a snapshot re-read after a resync) is
// appended too. A text shown from scratch is cut into chunks off the
// document and inserted once: appending to nodes already on the page costs
// an invalidation per chunk.

const CHUNK = 2048;
const NEWLINE_REACH = 1024;
const JOIN_LIMIT = 64 * 1024;
// The newest chunks are marked "near": the page lays them out always, the
// others only when they show (style.css). A class on three chunks, moved as
// chunks are added: a positional selector (:nth-last-child) restyled every
// chunk of the text whenever one was added.
const NEAR = 3;

export class StreamText {
  constructor(className, testid) {
    this.el = document.createElement('div');
    this.el.className = className;
    if (testid) this.el.dataset.testid = testid;
    this.shown = '';
    this.into = this.el; // where a new chunk goes: a fragment while #reset builds
    this.near = []; // the newest NEAR chunks, oldest first
    this.stats = { resets: 0 }; // read by tests: a streamed text is built once
    this.#reset('');
  }

  /**
   * set shows text, appending when it extends what is shown. While
   * streaming the text is chunked; once it stops, the chunks are joined
   * back into one block (a single layout) so no line ends early, unless
   * the text is longer than JOIN_LIMIT: then it keeps its chunks.
   */
  set(text, streaming = false, same = false) {
    const value = text ?? '';
    this.chunking = streaming || value.length > JOIN_LIMIT;
    this.streaming = streaming;
    if (same || value === this.shown) {
      if (!this.chunking && this.el.childElementCount > 1) this.#reset(value);
      return;
    }
    if (this.chunking && value.length > this.shown.length && value.startsWith(this.shown)) {
      this.#append(value.slice(this.shown.length));
    } else {
      this.#reset(value); // done, or not an extension (a different committed text): start over
    }
    this.shown = value;
  }

  /** append adds suffix to a streaming text (a change event's `appended`). */
  append(suffix) {
    this.#append(suffix);
    this.shown += suffix;
  }

  #reset(text) {
    this.stats.resets++;
    const built = document.createDocumentFragment();
    this.into = built;
    this.near = [];
    this.#newChunk();
    if (text) this.#append(text);
    this.into = this.el;
    this.el.replaceChildren(built);
  }

  #newChunk() {
    const chunk = document.createElement('span');
    chunk.className = 'chunk near';
    this.node = document.createTextNode('');
    chunk.append(this.node);
    this.into.append(chunk);
    this.chunkLen = 0;
    this.near.push(chunk);
    if (this.near.length > NEAR) this.near.shift().classList.remove('near');
  }

  #append(suffix) {
    let rest = suffix;
    let batch = null; // the new chunks of a long suffix, inserted at once
    while (this.chunking && this.chunkLen + rest.length > CHUNK) {
      const cut = breakAt(rest, Math.max(0, CHUNK - this.chunkLen));
      if (cut < 0) break;
      this.node.appendData(rest.slice(0, cut + 1));
      rest = rest.slice(cut + 1);
      if (!batch && this.into === this.el) this.into = batch = document.createDocumentFragment();
      this.#newChunk();
    }
    if (rest) {
      this.node.appendData(rest);
      this.chunkLen += rest.length;
    }
    if (batch) {
      this.into = this.el;
      this.el.append(batch);
    }
  }
}

// breakAt finds where a chunk may end in text, at or after from: a line break
// within NEWLINE_REACH characters, else the first space or line break; -1 if
// neither. The line break is looked for within reach only: a text without
// one would otherwise be scanned to its end once per chunk.
function breakAt(text, from) {
  const reach = from + NEWLINE_REACH + 1;
  const near = text.slice(from, reach).indexOf('\n');
  if (near >= 0) return from + near;
  const sp = text.indexOf(' ', from);
  if (sp < 0) return text.indexOf('\n', reach);
  if (sp < reach) return sp;
  const nl = text.slice(reach, sp).indexOf('\n'); // a line break before that space
  return nl >= 0 ? reach + nl : sp;
}
