// A real server that can be stopped and started again on the same port and
// SQLite file: a page that reloads while the server is down, then finds
// it back where it was (test/cache.test.js, test/cache-browser.test.js,
// bench/cache.bench.js).

import { spawn } from 'node:child_process';
import { buildServer, stopChild } from './syncserver.js';
import { createSession } from '../../index.js';
import { wasmPath } from '../paths.js';

// A server on addr (127.0.0.1:0 for any port) over the SQLite file db, so
// that it can be stopped and started again on the same port and data.
export async function serve(db, addr = '127.0.0.1:0') {
  const bin = await buildServer();
  const child = spawn(bin, ['-addr', addr, '-db', db, '-speed', '0s', '-log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`server exited with ${code}: ${err}`));
    });
  });
  return {
    url,
    addr: new URL(url).host,
    stop: () => stopChild(child),
  };
}


/** A session of n turns (2n messages), made from Node. */
export async function longSession(url, n) {
  const s = await createSession(url, { wasm: wasmPath, WebSocket: globalThis.WebSocket });
  for (let i = 0; i < n; i++) {
    const user = await s.send(`turn ${i}`);
    await s.waitFor((v) => v.messages.some((m) => m.role === 'agent' && m.sequence > user.sequence && m.state === 'done'));
  }
  s.close();
  return s.sessionId;
}

