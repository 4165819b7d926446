// Builds and starts the real reference server on 127.0.0.1 for the tests.

import { execFile, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoDir } from '../paths.js';

const exec = promisify(execFile);

let built = null;

/**
 * Builds ./server/cmd/syncserver once per process; returns the binary path.
 * Under npm test the server was built once for the run (test/run.mjs):
 * AGENTSYNC_SERVER_BIN names it.
 */
export function buildServer() {
  built ??= (async () => {
    if (process.env.AGENTSYNC_SERVER_BIN) return process.env.AGENTSYNC_SERVER_BIN;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'agentsync-js-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const bin = path.join(dir, 'syncserver');
    await exec('go', ['build', '-o', bin, './server/cmd/syncserver'], { cwd: repoDir, maxBuffer: 1 << 24, timeout: 10 * 60 * 1000 });
    return bin;
  })();
  return built;
}

/**
 * Starts the server on a free port with a fresh SQLite file; origins is
 * its -origins list (other browser origins allowed), jwtSecret its
 * -jwt-secret (HS256 bearer JWTs). rateLimit is -rate-limit: off (-1) by
 * default, because one test server is shared by a whole file whose tests
 * all come from 127.0.0.1 (one client to the limiter) and together pass
 * 20 requests/s; the limiter itself is tested in Go (server/limits_test.go)
 * and the JS host's handling of 429 against a proxy (send-retry.test.js).
 * @returns {Promise<{url: string, addr: string, stop: () => Promise<void>, stderr: () => string}>}
 */
export async function startServer({ speed = '1ms', token, origins, jwtSecret, rateLimit = -1 } = {}) {
  const bin = await buildServer();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agentsync-db-'));
  const args = ['-addr', '127.0.0.1:0', '-db', path.join(dir, 'e2e.db'), '-speed', speed, '-log-level', 'warn', '-rate-limit', String(rateLimit)];
  if (token) args.push('-token', token);
  if (origins) args.push('-origins', origins);
  if (jwtSecret) args.push('-jwt-secret', jwtSecret);
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
    if (err.length > 1 << 20) err = err.slice(-(1 << 19));
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`syncserver did not start: ${err}`)), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`syncserver exited with ${code}: ${err}`));
    });
  });
  return {
    url,
    addr: new URL(url).host,
    stderr: () => err,
    stop: async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Stops a server process: SIGTERM, and SIGKILL if it has not exited within
 * 15 s. The kill timer is cleared at the exit: a pending one kept the test
 * file's process alive for its 15 s after the last test.
 */
export function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
