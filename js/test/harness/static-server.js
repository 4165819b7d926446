// A tiny static server on 127.0.0.1 for the browser tests. It serves the
// package under /js/ (as the reference server does), the module at
// /js/agentsync.wasm, the traces under /traces/, and can forward /v1/ and
// /healthz (HTTP and WebSocket upgrades) to a real syncserver, so the page
// and the API share one origin.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { jsDir, tracesDir, wasmPath } from '../paths.js';

const TYPES = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', // ES module builds of node_modules (bench/chromium.html)
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.html': 'text/html; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
};

const PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>agentsync test</title></head><body></body></html>';

// Resolves a URL path inside root, refusing anything that escapes it.
function inside(root, rel) {
  const p = path.resolve(root, '.' + path.posix.normalize('/' + decodeURIComponent(rel)));
  return p === root || p.startsWith(root + path.sep) ? p : null;
}

function route(pathname) {
  if (pathname === '/js/agentsync.wasm') return wasmPath;
  if (pathname.startsWith('/js/')) return inside(path.resolve(jsDir), pathname.slice(4));
  if (pathname.startsWith('/traces/')) return inside(path.resolve(tracesDir), pathname.slice(8));
  return null;
}

/**
 * @param {{backend?: string}} [opts] backend: "127.0.0.1:PORT" of a syncserver to forward /v1/ and /healthz to
 * @returns {Promise<{url: string, close: () => Promise<void>}>}
 */
export async function startStaticServer(opts = {}) {
  const backend = opts.backend ? new URL(`http://${opts.backend}`) : null;
  const forwarded = (p) => backend && (p.startsWith('/v1/') || p === '/healthz');
  const server = http.createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://x');
    if (forwarded(pathname)) return proxy(req, res, backend);
    if (pathname === '/' || pathname === '/index.html') {
      res.writeHead(200, { 'Content-Type': TYPES['.html'] });
      return res.end(PAGE);
    }
    const file = route(pathname);
    try {
      if (!file || !(await stat(file)).isFile()) throw new Error('not a file');
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end('not found');
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  // WebSocket upgrades go through as raw bytes after the request head.
  server.on('upgrade', (req, socket, head) => {
    const { pathname } = new URL(req.url, 'http://x');
    if (!forwarded(pathname)) return socket.destroy();
    const up = net.connect(Number(backend.port), backend.hostname, () => {
      let raw = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i];
        const value = name.toLowerCase() === 'origin' ? backend.origin : name.toLowerCase() === 'host' ? backend.host : req.rawHeaders[i + 1];
        raw += `${name}: ${value}\r\n`;
      }
      up.write(raw + '\r\n');
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    const end = () => {
      up.destroy();
      socket.destroy();
    };
    up.on('error', end);
    socket.on('error', end);
    up.on('close', end);
    socket.on('close', end);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

// The page and the API share one origin through this server, as they do
// when syncserver serves the package itself: the backend sees its own origin.
function sameOrigin(headers, backend) {
  const h = { ...headers, host: backend.host };
  if (h.origin) h.origin = backend.origin;
  return h;
}

function proxy(req, res, backend) {
  const up = http.request(
    { host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers: sameOrigin(req.headers, backend) },
    (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    },
  );
  up.on('error', (err) => {
    res.writeHead(502, { 'Content-Type': 'text/plain' });
    res.end(String(err));
  });
  req.pipe(up);
}
