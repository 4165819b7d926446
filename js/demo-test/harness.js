// Shared by the demo page's browser tests: builds the reference server,
// runs it on a free 127.0.0.1 port with a temporary SQLite file, and
// launches Debian's Chromium through playwright-core.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../test/harness/browser.js';
import { buildServer, stopChild } from '../test/harness/syncserver.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const artifacts = path.join(here, 'artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * startDemo builds and starts the server (speed: the scripted model's delay
 * per delta) and a browser. Returns {url, browser, logs, close}.
 */
export async function startDemo({ speed = '2ms' } = {}) {
  const tmp = await mkdtemp(path.join(tmpdir(), 'agentsync-demo-'));
  // AGENTSYNC_DEMO_SERVER names a server binary built elsewhere (a bench
  // comparing two servers); by default this tree's is built.
  const bin = process.env.AGENTSYNC_DEMO_SERVER || (await buildServer());
  const server = await startServer(bin, path.join(tmp, 'demo.db'), speed);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  return {
    url: server.url,
    browser,
    logs: server.logs,
    async close() {
      await browser.close();
      await stopChild(server.proc);
      await rm(tmp, { recursive: true, force: true });
    },
  };
}

// startServer runs the binary on 127.0.0.1 port 0 and reads the bound URL
// from its "listening on http://..." line.
function startServer(bin, db, speed) {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, ['-addr', '127.0.0.1:0', '-db', db, '-speed', speed, '-log-level', 'warn'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const logs = [];
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${logs.join('')}`)), 30000);
    proc.stderr.on('data', (d) => logs.push(String(d)));
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1], logs });
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${logs.join('')}`));
    });
  });
}

/** watchErrors collects the page's uncaught errors and console errors. */
export function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  return errors;
}

// settled: the page's session is live and the page shows no agent message
// streaming. It reads the DOM, not session.view: reading the view flushes
// the host's pending changes, and the test must not change what it observes.
export const settled = () => {
  const s = window.__agentsync?.session;
  return !!s && s.status === 'live' &&
    document.querySelectorAll('[data-testid="message"]').length > 0 &&
    document.querySelectorAll('[data-testid="message"][data-state="streaming"]').length === 0;
};

// answerShown: the newest text part is done, rendered, and shows at least 90% of n
// characters. It sums the lengths of its text nodes: reading textContent
// would join a long answer into one string on every poll, a long task of
// its own in the page being measured.
export const answerShown = (n) => {
  const parts = document.querySelectorAll('[data-testid="part-text"]');
  const last = parts[parts.length - 1];
  // data-rendering: a long text still being rendered in slices (markdown.js).
  if (!last || last.classList.contains('streaming') || last.hasAttribute('data-rendering')) return false;
  let length = 0;
  const walk = document.createTreeWalker(last, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) length += walk.currentNode.length;
  return length >= n * 0.9;
};
