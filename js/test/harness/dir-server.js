// Serves a built app's directory on 127.0.0.1 (another origin than the
// reference server), as a static host would: index.html for "/", the
// media type of each file, 404 for anything else.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
};

/** @returns {Promise<{url: string, close: () => Promise<void>}>} */
export async function serveDir(root) {
  root = path.resolve(root);
  const server = http.createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://x');
    const file = path.resolve(root, '.' + path.posix.normalize('/' + decodeURIComponent(pathname === '/' ? '/index.html' : pathname)));
    try {
      if (!file.startsWith(root + path.sep) || !(await stat(file)).isFile()) throw new Error('not a file');
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end('not found');
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
