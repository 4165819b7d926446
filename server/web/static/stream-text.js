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
// a space ending a block shows nothing under `white-space: pre-wrap`, and
// textContent stays exactly the text. A chunk cut at a space would end its
// last line early (a false line break every CHUNK characters), so a stream
// moves that line into the next chunk once the chunk is laid out
// (#balance): the chunks read as one continuous text.
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
// At most this many chunks cut by one append are balanced (#balance).
const BALANCE_MAX = 4;

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
  set(text, streaming = false, same = false, balance = streaming) {
    const value = text ?? '';
    this.chunking = streaming || value.length > JOIN_LIMIT;
    this.streaming = streaming;
    if (same || value === this.shown) {
      if (!this.chunking && this.el.childElementCount > 1) this.#reset(value);
      return;
    }
    if (this.chunking && value.length > this.shown.length && value.startsWith(this.shown)) {
      this.#append(value.slice(this.shown.length), balance);
    } else {
      this.#reset(value); // done, or not an extension (a different committed text): start over
    }
    this.shown = value;
  }

  /**
   * append adds suffix to a streaming text (a change event's `appended`).
   * balance: false for text that is not a stream's delta (a long text fed
   * a slice at a time: its chunks keep their cuts, no layout is forced).
   */
  append(suffix, balance = true) {
    this.#append(suffix, balance);
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

  #append(suffix, balance = false) {
    let rest = suffix;
    let batch = null; // the new chunks of a long suffix, inserted at once
    const sealed = []; // [chunk's text node, next chunk's text node] cut at a space
    while (this.chunking && this.chunkLen + rest.length > CHUNK) {
      const cut = breakAt(rest, Math.max(0, CHUNK - this.chunkLen));
      if (cut < 0) break;
      this.node.appendData(rest.slice(0, cut + 1));
      rest = rest.slice(cut + 1);
      const prev = this.node;
      if (!batch && this.into === this.el) this.into = batch = document.createDocumentFragment();
      this.#newChunk();
      if (prev.data.at(-1) !== '\n') sealed.push([prev, this.node]);
    }
    if (rest) {
      this.node.appendData(rest);
      this.chunkLen += rest.length;
    }
    if (batch) {
      this.into = this.el;
      this.el.append(batch);
    }
    // A chunk that ends at a space, not a line break, has its last line
    // moved to the next chunk, so no line ends early (#balance): for the
    // few chunks a stream's delta (or a first view of one) seals on the
    // page. A text shown from scratch, or a long one fed a slice at a
    // time, keeps its cuts (a done text up to JOIN_LIMIT is joined anyway).
    if (balance && sealed.length > 0 && sealed.length <= BALANCE_MAX && this.into === this.el && this.el.isConnected) {
      for (const [chunk, next] of sealed) this.#balance(chunk, next);
    }
  }

  // balance moves the last line of a chunk (laid out: it is near) to the
  // start of the next one. Lines break greedily from a block's start, so
  // the chunk keeps its other lines as they were and the next one starts
  // where that line started: the text reads as one block, with no line
  // ending early where a chunk ends. One forced layout of the newest
  // chunks per CHUNK characters streamed.
  #balance(chunk, next) {
    const len = chunk.length;
    if (len < 2) return;
    const range = document.createRange();
    const top = (i) => {
      range.setStart(chunk, i);
      range.setEnd(chunk, i + 1);
      const r = range.getClientRects()[0];
      return r ? r.top : NaN;
    };
    const last = top(len - 2); // the character before the closing space
    if (Number.isNaN(last)) return;
    let lo = 0;
    let hi = len - 2; // the first character of the last line is in [lo, hi]
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (top(mid) >= last - 0.5) hi = mid;
      else lo = mid + 1;
    }
    const c = chunk.data.charCodeAt(lo);
    if (lo > 0 && c >= 0xdc00 && c <= 0xdfff) lo--; // never split a surrogate pair
    if (lo <= 0) return; // a one-line chunk: nothing to gain
    const moved = chunk.data.slice(lo);
    chunk.deleteData(lo, len - lo);
    next.insertData(0, moved);
    if (next === this.node) this.chunkLen += moved.length;
    this.stats.balanced = (this.stats.balanced ?? 0) + 1;
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
