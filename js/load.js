// Loading the WebAssembly module, with web APIs only: this file is part of
// the browser entry, so it imports nothing from `node:` and bundlers (Vite,
// webpack) can follow it. Reading a file path is the Node entry's job
// (node.js installs it with useFileLoader); a browser never has one.

import { AgentsyncError } from './errors.js';

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d]; // "\0asm"

// Installed by node.js: (path or file: URL) => Promise<Uint8Array>, and the
// module location to use when the caller names none.
let fileLoader = null;
let defaultSource = null;

/**
 * Lets a host read local files: the Node entry installs its reader here.
 * @param {{read: (file: string | URL) => Promise<Uint8Array>, defaultSource?: () => Promise<string | URL>}} loader
 */
export function useFileLoader(loader) {
  fileLoader = loader.read;
  defaultSource = loader.defaultSource ?? null;
}

// Compiled modules by source, so a rebuild after a trap, or a second
// session, does not compile the module again.
const compiled = new Map();

/**
 * Compiles the module from a URL (string or URL object), a file path (Node
 * entry), bytes, or returns a WebAssembly.Module as it is.
 * @returns {Promise<WebAssembly.Module>}
 */
export async function loadModule(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return compileBytes(source, 'the given bytes', '');
  const key = String(source instanceof URL ? source.href : source);
  let p = compiled.get(key);
  if (!p) {
    p = compileFrom(source);
    compiled.set(key, p);
    p.catch(() => compiled.delete(key));
  }
  return p;
}

/**
 * The module's default location: agentsync.wasm next to this file. Written
 * as `new URL('./…', import.meta.url)` on purpose: Vite and webpack see this
 * form, copy the file into the build and rewrite the URL.
 */
export function defaultWasmURL() {
  return new URL('./agentsync.wasm', import.meta.url);
}

/** Where to load the module from when the caller names none. */
export async function defaultWasmSource() {
  return defaultSource ? defaultSource() : defaultWasmURL();
}

async function compileFrom(source) {
  let url;
  if (source instanceof URL) {
    url = source;
  } else if (typeof source === 'string') {
    if (!isURL(source)) {
      if (fileLoader) return compileBytes(await fileLoader(source), source, '');
      if (!globalThis.location) throw needsNodeEntry(source);
    }
    url = new URL(source, globalThis.location?.href);
  } else {
    throw new AgentsyncError('bad_request', 'wasm must be a URL, a path, bytes or a WebAssembly.Module');
  }
  if (url.protocol === 'file:') {
    if (!fileLoader) throw needsNodeEntry(url.href);
    return compileBytes(await fileLoader(url), url.href, '');
  }
  let res;
  try {
    res = await fetch(url);
  } catch (err) {
    // A CORS refusal surfaces only as "Failed to fetch": say where it happened.
    throw new AgentsyncError('not_found', `fetching the module from ${url.href} failed: ${err?.message ?? err} (another origin? it must send CORS headers: syncserver -origins)`);
  }
  const type = res.headers.get('content-type') || '';
  if (!res.ok) throw new AgentsyncError('not_found', `fetching the module from ${url.href}: HTTP ${res.status} (${type || 'no content-type'})`);
  if (WebAssembly.compileStreaming && type.startsWith('application/wasm')) {
    try {
      return await WebAssembly.compileStreaming(res.clone());
    } catch {
      // A proxy that rewrote the body: check the bytes below for a clear error.
    }
  }
  return compileBytes(new Uint8Array(await res.arrayBuffer()), url.href, type);
}

function needsNodeEntry(file) {
  return new AgentsyncError('bad_request', `cannot read ${file}: files are read by the Node entry (import '@agentsync/client' under Node resolves to it; in a checkout, js/node.js)`);
}

// Windows drive paths ("C:\…") look like a scheme but are paths.
function isURL(s) {
  return /^[a-z][a-z0-9+.-]*:/i.test(s) && !/^[a-z]:[\\/]/i.test(s);
}

// Compiles bytes after checking they are a module: a dev server answering
// its index.html for an unknown path is the usual culprit, and
// WebAssembly.compile would only say "expected magic word".
async function compileBytes(bytes, from, contentType) {
  const u8 = bytes instanceof Uint8Array ? bytes : ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
  if (!WASM_MAGIC.every((b, i) => u8[i] === b)) {
    const head = Array.from(u8.subarray(0, 16), (b) => b.toString(16).padStart(2, '0')).join(' ');
    const text = new TextDecoder().decode(u8.subarray(0, 32)).replace(/[^\x20-\x7e]/g, '.');
    throw new AgentsyncError(
      'bad_request',
      `${from} is not a WebAssembly module: got ${contentType || 'no content-type'}, ${u8.length} bytes starting ${head || '(empty)'} ("${text}"); ` +
        'serve agentsync.wasm there or pass the wasm option',
    );
  }
  return WebAssembly.compile(u8);
}
