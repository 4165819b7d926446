// Small DOM and formatting helpers shared by the demo page's modules.
// Everything that comes from the server is put in the DOM as text
// (textContent, never innerHTML), so a message can not inject markup.

/**
 * el builds an element: el('div', {class: 'x', dataset: {testid: 'y'}}, child, 'text').
 * Attributes whose value is null/undefined/false are left out.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child == null || child === false) continue;
    node.append(child);
  }
  return node;
}

/** setText changes an element's text only when it differs (no needless layout). */
export function setText(node, text) {
  const value = text == null ? '' : String(text);
  if (node.textContent !== value) node.textContent = value;
}

/** toggle sets or clears a class, like classList.toggle with a boolean. */
export function toggle(node, cls, on) {
  node.classList.toggle(cls, Boolean(on));
}

/**
 * pretty renders any decoded msgpack/JSON value for a <pre>: strings as
 * they are, the rest as indented JSON. Maps, BigInts and byte arrays (which
 * a msgpack decoder may hand back) get a readable form instead of throwing.
 */
export function pretty(value) {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  try {
    return compactArrays(JSON.stringify(value, jsonReplacer, 2));
  } catch {
    return String(value);
  }
}

// compactArrays puts short arrays of plain values on one line
// ([3, 5, 2] rather than one number per line), as people write JSON.
function compactArrays(json) {
  return json.replace(/\[\n\s*([^\[\]{}]*?)\n\s*\]/g, (whole, inner) => {
    const flat = inner.split(/,\n\s*/).join(', ');
    return flat.length <= 72 ? `[${flat}]` : whole;
  });
}

function jsonReplacer(_key, value) {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  return value;
}

let unserialisable = 0;

/** fingerprint is a cheap change detector for small non-text parts. */
export function fingerprint(value) {
  try {
    return JSON.stringify(value, jsonReplacer);
  } catch {
    return `unserialisable:${++unserialisable}`; // never equal: always re-render
  }
}

/**
 * safeURL returns url when it is a link a demo page may follow (http, https,
 * data, blob or relative), otherwise null: a part's url is untrusted and a
 * "javascript:" link must never become clickable.
 */
export function safeURL(url) {
  if (typeof url !== 'string' || url === '') return null;
  try {
    const parsed = new URL(url, location.href);
    return ['http:', 'https:', 'data:', 'blob:'].includes(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/** shortId keeps the recognisable tail of a long server id. */
export function shortId(id) {
  const s = String(id ?? '');
  return s.length > 12 ? '…' + s.slice(-8) : s;
}

// Made once: toLocaleTimeString builds a formatter per call (milliseconds
// each, in the render that shows a new message).
let clock = null;
let day = null;

/** timeOf formats Unix milliseconds as a local clock time (or date, when not today). */
export function timeOf(ms) {
  if (!ms) return '';
  clock ??= new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit' });
  day ??= new Intl.DateTimeFormat([], { month: 'short', day: 'numeric' });
  const d = new Date(Number(ms));
  const sameDay = d.toDateString() === new Date().toDateString();
  return sameDay ? clock.format(d) : `${day.format(d)} ${clock.format(d)}`;
}

/** plural: plural(3, 'message') -> "3 messages". */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * copyText writes text to the clipboard and says so on the button for a
 * moment ("Copied", or "Copy failed" where the clipboard is refused),
 * then reads "Copy" again.
 */
export async function copyText(button, text) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Copy failed';
  }
  setTimeout(() => (button.textContent = 'Copy'), 1500);
}
