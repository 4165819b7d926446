// What a new user met in the demo page (issue 25's review), each fixed and
// observed in headless Chromium against the real server: a long streamed
// answer reads as one continuous text with one caret, a model's usage is a
// muted footer, Retry leaves an error once it is not the last turn's and
// replays the scenario, message actions sit under the message, scripted
// answers end on a whole word, the markdown sample says what was removed.
//
// Run: cd js && node --experimental-websocket --import ./node.js --test demo-test/review.test.js

import { test, before, after } from '../test/harness/timed.js';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startDemo, settled, artifacts, watchErrors } from './harness.js';

let server;

before(async () => {
  server = await startDemo({ speed: '3ms' });
  await mkdir(artifacts, { recursive: true });
}, { timeout: 12 * 60 * 1000 });

after(async () => {
  await server?.close();
});

async function withPage(fn, opts = {}) {
  const context = await server.browser.newContext({ viewport: { width: 1100, height: 820 }, colorScheme: 'light', ...opts });
  const page = await context.newPage();
  const errors = watchErrors(page);
  try {
    await fn(page, context);
    assert.deepEqual(errors, [], 'no page errors');
  } finally {
    await context.close();
  }
}

async function newSession(page) {
  await page.goto(`${server.url}/`);
  await page.getByTestId('new-session').click();
  await page.waitForFunction(() => location.hash.length > 1 && window.__agentsync?.session);
  await page.locator('[data-testid="status"][data-status="live"]').waitFor();
  return page.evaluate(() => window.__agentsync.sessionId);
}

async function say(page, text) {
  await page.getByTestId('input').fill(text);
  await page.getByTestId('input').press('Enter');
}

async function turn(page, text) {
  const before = await page.locator('[data-testid="message"]').count();
  await say(page, text);
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="message"]').length >= n, before + 2);
  await page.waitForFunction(settled, null, { timeout: 60000 });
}

async function api(method, p, body) {
  const res = await fetch(server.url + p, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `review-${name}.png`) });
}

// measure, in the page while the answer streams: the streamed text's carets
// (pseudo-elements that draw one), its chunks, and its height beside the
// same text laid out as one block (a false line break adds a line).
function measure() {
  const part = [...document.querySelectorAll('[data-testid="part-text"].streaming')].at(-1);
  if (!part) return null;
  const plain = part.querySelector('.md-plain') ?? part;
  const chunks = plain.querySelectorAll('.chunk').length;
  const carets = [...part.querySelectorAll('*'), part].filter((n) => {
    const after = getComputedStyle(n, '::after');
    return after.content !== 'none' && after.content !== 'normal' && after.display !== 'none' && parseFloat(after.width) > 0;
  }).length;
  // Where each visual line starts (text offsets), in the streamed text and
  // in the same text laid out as one block: a chunk that ended a line early
  // moves every line start after it. Measured without the caret (its 8 px
  // could wrap a line of either).
  const lineStarts = (root) => {
    const starts = [];
    const range = document.createRange();
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let offset = 0;
    let top = -Infinity;
    while (walk.nextNode()) {
      const node = walk.currentNode;
      for (let i = 0; i < node.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getClientRects()[0];
        if (r && node.data[i] !== ' ' && r.top > top + 1) {
          starts.push(offset + i);
          top = r.top;
        }
      }
      offset += node.length;
    }
    return starts;
  };
  part.classList.remove('streaming');
  const ref = document.createElement('div');
  ref.className = plain.className;
  ref.textContent = plain.textContent;
  plain.after(ref);
  const lines = [lineStarts(plain), lineStarts(ref)];
  ref.remove();
  part.classList.add('streaming');
  return { chunks, carets, lines, length: plain.textContent.length };
}

test('a long streamed answer reads as one text: no false line breaks, one caret', { timeout: 120000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    await say(page, 'scenario:text chars=10000 delta=6');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="part-text"].streaming')].some((p) => p.textContent.length > 7000), null, { timeout: 60000 });
    const m = await page.evaluate(measure);
    assert.ok(m, 'still streaming when measured');
    assert.ok(m.chunks >= 3, `the text streamed into chunks (${m.chunks}) at ${m.length} chars`);
    assert.equal(m.carets, 1, 'one caret');
    assert.ok(m.lines[1].length > 50, `measured ${m.lines[1].length} lines`);
    assert.deepEqual(m.lines[0], m.lines[1], 'every line starts where it does in the same text as one block');
    await shot(page, 'streaming');
    await page.waitForFunction(settled, null, { timeout: 60000 });
    const carets = await page.evaluate(() => [...document.querySelectorAll('[data-testid="message"] *')].filter((n) => {
      const after = getComputedStyle(n, '::after');
      return after.content !== 'none' && after.content !== 'normal' && after.display !== 'none' && parseFloat(after.width) > 0 && after.animationName === 'blink';
    }).length);
    assert.equal(carets, 0, 'no caret once done');
    // Scripted answers end on a whole word.
    const text = await page.evaluate(() => window.__agentsync.session.view.messages.at(-1).parts.find((p) => p.type === 'text').text);
    assert.equal([...text].length, 10000);
    assert.match(text, /(^|\s)(lorem|ipsum|dolor|sit|amet|consectetur|adipiscing|elit|sed|do|eiusmod|tempor|incididunt|ut|labore|et|dolore|magna|aliqua|café|naïve|déjà|vu|façade|—|über|smörgåsbord)$/u);
  });
});

test('a model\'s usage is a muted footer under the reply, not a data card', { timeout: 90000 }, async () => {
  await withPage(async (page) => {
    const id = await newSession(page);
    await turn(page, 'scenario:usage chars=80');
    const items = (await api('GET', `/v1/sessions/${id}/messages`)).body.items;
    const usage = items.at(-1).parts.find((p) => p.type === 'data' && p.data_type === 'usage');
    assert.ok(usage, 'the server has the usage part');
    const reply = page.locator('[data-role="agent"]').last();
    assert.equal(await reply.locator('[data-testid="data"]:visible').count(), 0, 'no data card');
    const footer = reply.getByTestId('usage');
    const total = usage.data.input_tokens + usage.data.output_tokens;
    assert.equal(await footer.textContent(), `${total} tokens · scripted`);
    // Under the message's parts, small and muted.
    const r = await page.evaluate(() => {
      const reply = [...document.querySelectorAll('[data-role="agent"]')].at(-1);
      const foot = reply.querySelector('[data-testid="usage"]');
      const parts = reply.querySelector('.parts').getBoundingClientRect();
      const style = getComputedStyle(foot);
      return { below: foot.getBoundingClientRect().top >= parts.bottom - 1, size: parseFloat(style.fontSize), body: parseFloat(getComputedStyle(reply.querySelector('.parts')).fontSize) };
    });
    assert.ok(r.below, 'the footer is under the parts');
    assert.ok(r.size < r.body, `smaller than the text (${r.size} < ${r.body})`);
    await shot(page, 'usage');
  });
});

test('message actions sit together under the message', { timeout: 90000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    await turn(page, 'scenario:text chars=60');
    const reply = page.locator('[data-role="agent"]').last();
    await reply.hover();
    const r = await page.evaluate(() => {
      const reply = [...document.querySelectorAll('[data-role="agent"]')].at(-1);
      const box = (s) => reply.querySelector(s).getBoundingClientRect();
      const actions = reply.querySelector('[data-testid="message-actions"]');
      return {
        inActions: ['copy-message', 'regenerate'].every((t) => actions.contains(reply.querySelector(`[data-testid="${t}"]`))),
        inHeader: reply.querySelector('header').querySelectorAll('button').length,
        below: box('[data-testid="copy-message"]').top >= box('.parts').bottom - 1,
        gap: box('[data-testid="regenerate"]').left - box('[data-testid="copy-message"]').right,
      };
    });
    assert.ok(r.inActions, 'Copy and Regenerate are in the actions row');
    assert.equal(r.inHeader, 0, 'no action in the header');
    assert.ok(r.below, 'under the message');
    assert.ok(r.gap >= 0 && r.gap < 24, `side by side (${r.gap}px apart)`);
    await shot(page, 'actions');
  });
});

test('Retry replays the scenario as its next take, and the old error loses its Retry', { timeout: 120000 }, async () => {
  await withPage(async (page) => {
    const id = await newSession(page);
    await turn(page, 'scenario:error chars=80');
    await page.getByTestId('retry').waitFor();
    await page.getByTestId('retry').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-role="agent"]').length >= 2, null, { timeout: 30000 });
    await page.waitForFunction(settled, null, { timeout: 60000 });
    const items = (await api('GET', `/v1/sessions/${id}/messages`)).body.items;
    const answer = items.at(-1).parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    assert.match(answer, /^\(Take 2\) /, `the retried answer: ${answer.slice(0, 80)}`);
    assert.doesNotMatch(answer, /interrupted|You said/, 'not an echo of the recovery prompt');
    assert.equal(await page.locator('[data-role="agent"]').last().locator('.markdown').textContent(), answer);
    // The old error stays, without a Retry that would answer 409.
    await page.getByTestId('error').waitFor();
    assert.equal(await page.locator('[data-testid="retry"]:visible').count(), 0, 'no stale Retry');
    assert.equal((await api('POST', `/v1/sessions/${id}/actions`, { action_type: 'retry' })).status, 409, 'the server has nothing to retry');

    // A new failure offers Retry again, on the new error only.
    await turn(page, 'scenario:error chars=40');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="error"]').length === 2);
    const shown = await page.evaluate(() => [...document.querySelectorAll('[data-testid="error"]')].map((e) => !e.querySelector('[data-testid="retry"]').hidden));
    assert.deepEqual(shown, [false, true]);
    await shot(page, 'retry');
  });
});

test('the markdown sample says what sanitizing removed, with no empty gap', { timeout: 90000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    await turn(page, 'scenario:markdown');
    const quote = page.locator('[data-role="agent"] .markdown blockquote').last();
    const text = await quote.textContent();
    assert.match(text, /Raw HTML is sanitized: a <script> tag, an <img onerror> handler and a javascript: link never run/);
    assert.doesNotMatch(text, /:\s{2,}|\s{2,}and/, `no gap where the markup was: ${text}`);
    assert.ok(await quote.locator('code').count() >= 3, 'the removed markup is shown as code');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
  });
});
