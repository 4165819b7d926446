// End-to-end test of the live demo page in headless Chromium against the
// real reference server: the server binary is built and started on a free
// 127.0.0.1 port with a temporary SQLite file, and the page talks to it over
// real HTTP and WebSocket connections through the WebAssembly core.
//
// It plays an approval turn (clicking Approve), then a 100,000-character
// stream during which it cuts the connection, and checks that the texts the
// page shows equal the server's snapshot exactly: nothing lost, nothing
// doubled, nothing left streaming.
//
// Run: cd js && node --test demo-test/   (needs Go and /usr/bin/chromium)

import { test, before, after } from '../test/harness/timed.js';
import assert from 'node:assert/strict';
import { stat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startDemo, settled, artifacts, watchErrors } from './harness.js';

const LONG_CHARS = 100000;

let server; // {url, browser, close}
let browser;

before(async () => {
  server = await startDemo({ speed: '2ms' }); // 2 ms per delta: a 2,000-delta stream takes seconds
  browser = server.browser;
}, { timeout: 12 * 60 * 1000 });

after(async () => {
  await server?.close();
});

// serverSnapshot reads every page of the session's messages, oldest first.
async function serverSnapshot(base, sessionId) {
  const items = [];
  let before = 0;
  for (let guard = 0; guard < 1000; guard++) {
    const q = new URLSearchParams({ limit: '200' });
    if (before) q.set('before_sequence', String(before));
    const res = await fetch(`${base}/v1/sessions/${encodeURIComponent(sessionId)}/messages?${q}`);
    assert.equal(res.status, 200, `GET messages: ${res.status}`);
    const page = await res.json();
    items.unshift(...page.items);
    if (!page.has_more || !page.next_before_sequence) return items;
    before = page.next_before_sequence;
  }
  throw new Error('too many pages');
}

// pageMessages reads what the page shows: per message its id, revision,
// state and the text of every text part, straight from the DOM.
function pageMessages(page) {
  return page.$$eval('[data-testid="message"]', (nodes) =>
    nodes.map((n) => ({
      message_id: n.dataset.messageId,
      role: n.dataset.role,
      revision: Number(n.dataset.revision),
      state: n.dataset.state,
      texts: [...n.querySelectorAll('[data-testid="part-text"]')].map((t) => t.textContent),
    })),
  );
}

function expected(items) {
  return items.map((m) => ({
    message_id: m.message_id,
    role: m.role,
    revision: m.revision,
    state: m.role === 'user' ? 'done' : m.state,
    texts: m.parts.filter((p) => p.type === 'text').map((p) => p.text ?? ''),
  }));
}

// assertSameMessages compares message by message and reports a mismatch
// briefly (lengths and the first differing offset), not as two 100 KB dumps.
function assertSameMessages(shown, want) {
  const brief = (m) => ({ ...m, texts: m.texts.map((t) => `${t.length} chars: ${t.slice(0, 40)}…`) });
  assert.equal(shown.length, want.length, `message count: page ${JSON.stringify(shown.map(brief))}, server ${JSON.stringify(want.map(brief))}`);
  for (let i = 0; i < want.length; i++) {
    const a = shown[i];
    const b = want[i];
    assert.deepEqual(brief({ ...a, texts: [] }), brief({ ...b, texts: [] }), `message ${i} header`);
    assert.equal(a.texts.length, b.texts.length, `message ${i} (${b.message_id}) text part count`);
    a.texts.forEach((t, j) => {
      if (t === b.texts[j]) return;
      let at = 0;
      while (at < t.length && t[at] === b.texts[j][at]) at++;
      assert.fail(`message ${i} (${b.message_id}) text ${j}: page has ${t.length} chars, server ${b.texts[j].length}; first difference at ${at}: page ${JSON.stringify(t.slice(at, at + 40))} server ${JSON.stringify(b.texts[j].slice(at, at + 40))}`);
    });
  }
}

test('demo page: approval, then a long stream healed across a dropped connection', { timeout: 5 * 60 * 1000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const pageErrors = watchErrors(page);

  try {
    await page.goto(`${server.url}/`);
    await page.getByTestId('new-session').click();
    await page.waitForFunction(() => location.hash.length > 1 && window.__agentsync?.session);
    await page.locator('[data-testid="status"][data-status="live"]').waitFor();
    const sessionId = await page.evaluate(() => window.__agentsync.sessionId);
    assert.ok(sessionId, 'a session id in window.__agentsync');
    assert.equal(await page.evaluate(() => decodeURIComponent(location.hash.slice(1))), sessionId);
    await page.locator(`[data-testid="session-item"][data-session-id="${sessionId}"]`).waitFor();

    // --- approval: the tool waits for the user, who approves it.
    await page.getByTestId('input').fill('scenario:approval');
    await page.getByTestId('input').press('Enter');
    const approve = page.getByTestId('approve');
    await approve.waitFor({ timeout: 30000 });
    await page.locator('[data-testid="tool"][data-state="awaiting-approval"]').waitFor();
    await approve.click();
    await page.locator('[data-testid="interaction"][data-status="resolved"]').waitFor({ timeout: 30000 });
    await page.locator('[data-testid="tool"][data-state="output-available"]').waitFor({ timeout: 30000 });
    await page.waitForFunction(settled, null, { timeout: 30000 });
    assert.match(await page.getByTestId('interaction-result').first().textContent(), /Approved/);

    // --- a long stream, with the connection cut in the middle.
    await page.getByTestId('input').fill(`scenario:long chars=${LONG_CHARS} delta=50`);
    await page.getByTestId('send').click();
    await page.waitForFunction(
      (min) => [...document.querySelectorAll('[data-testid="part-text"].streaming')].some((t) => t.textContent.length > min),
      LONG_CHARS / 5,
      { timeout: 60000 },
    );
    const before = await page.evaluate(() => document.querySelector('[data-testid="part-text"].streaming').textContent.length);
    // The streamed text's first chunk: the same node must show it when the
    // answer is done, through the dropped connection's snapshot re-read
    // (what was shown is kept and only the rest appended: no rebuild, no
    // reflow of a long answer).
    await page.evaluate(() => {
      window.__firstChunk = document.querySelector('[data-testid="part-text"].streaming .chunk');
    });
    // Every status the session goes through from here, as its listeners
    // hear them: a loaded page can go to "connecting" and back to "live"
    // between two polls of the status itself.
    await page.evaluate(() => {
      window.__statuses = [];
      window.__agentsync.session.on('status', (e) => window.__statuses.push(e.status));
    });
    await page.getByTestId('drop-connection').click();
    // The view must leave "live" (the socket is gone) and come back to it.
    await page.waitForFunction(() => window.__statuses.some((s) => s !== 'live'), null, { timeout: 10000 });
    await page.locator('[data-testid="status"][data-status="live"]').waitFor({ timeout: 30000 });
    // The "healed" banner hides after a few seconds: check it was shown, not that it still is.
    await page.locator('[data-testid="banner"][data-kind="ok"]').waitFor({ state: 'attached', timeout: 30000 });
    await page.waitForFunction(settled, null, { timeout: 120000 });
    assert.ok(before < LONG_CHARS, `dropped mid-stream (at ${before} chars)`);

    // --- the page shows exactly the server's snapshot.
    const snapshot = await serverSnapshot(server.url, sessionId);
    const shown = await pageMessages(page);
    assertSameMessages(shown, expected(snapshot));
    const longest = Math.max(...shown.flatMap((m) => m.texts.map((t) => [...t].length)));
    assert.equal(longest, LONG_CHARS, 'the long answer arrived whole, rune for rune');
    // The host's view (what the DOM was rendered from) agrees too.
    const view = await page.evaluate(() => window.__agentsync.session.view.messages);
    assert.deepEqual(view.map((m) => [m.message_id, m.revision]), snapshot.map((m) => [m.message_id, m.revision]));
    assert.equal(await page.locator('.streaming').count(), 0, 'nothing is left streaming');
    const kept = await page.evaluate(() => {
      const part = [...document.querySelectorAll('[data-testid="part-text"]')].at(-1);
      const chunks = part.querySelectorAll('.chunk');
      const sc = document.getElementById('scroller');
      return {
        same: chunks[0] === window.__firstChunk && window.__firstChunk.isConnected,
        chunks: chunks.length,
        // Off-screen chunks are not laid out; the last ones always are.
        visibility: [...chunks].map((c) => getComputedStyle(c).contentVisibility).join(' ').replace(/^(auto )+/, 'auto… '),
        fromBottom: sc.scrollHeight - sc.scrollTop - sc.clientHeight,
      };
    });
    assert.ok(kept.same, 'the first chunk streamed is the one shown at done, after the re-read too');
    assert.ok(kept.chunks > 20, `a long answer stays in chunks when done (${kept.chunks})`);
    assert.equal(kept.visibility, 'auto… visible visible visible', 'only the newest three chunks are always laid out');
    assert.ok(kept.fromBottom <= 2, `the page followed the answer to its end (${kept.fromBottom}px from the bottom)`);
    // The stream reached the DOM through the host's change events: appended
    // text fed to the open block, not a re-render of the message per frame.
    const appends = await page.evaluate(() => window.__agentsync.list.appends);
    assert.ok(appends > 50, `${appends} frames shown by appending alone`);

    // --- a screenshot for people (and the artifact check).
    await mkdir(artifacts, { recursive: true });
    const shot = path.join(artifacts, 'demo.png');
    await page.evaluate(() => {
      // Scroll to the approval turn so the picture shows more than lorem ipsum.
      document.querySelector('[data-testid="message"]')?.scrollIntoView({ block: 'start' });
    });
    await page.screenshot({ path: shot });
    const st = await stat(shot);
    assert.ok(st.size > 0, 'screenshot is non-empty');
    assert.deepEqual(pageErrors, [], 'no page errors');
  } finally {
    await context.close();
  }
});

// postJSON calls the REST API the way any client would.
async function postJSON(base, path, body) {
  const res = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `POST ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

// waitIdle polls the head of the session until its newest message is a
// done agent message (the turn is over).
async function waitIdle(base, sessionId, deadlineMs = 30000) {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const res = await fetch(`${base}/v1/sessions/${encodeURIComponent(sessionId)}/messages?limit=1`);
    const page = await res.json();
    const last = page.items[page.items.length - 1];
    if (last && last.role === 'agent' && last.state === 'done') return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('turn did not finish');
}

test('demo page: older history on scroll to top, and a question answered in the box', { timeout: 3 * 60 * 1000 }, async () => {
  // 32 short turns = 64 messages: more than the core's first page (50).
  const { session_id: sessionId } = await postJSON(server.url, '/v1/sessions', {});
  const TURNS = 32;
  for (let i = 1; i <= TURNS; i++) {
    await postJSON(server.url, `/v1/sessions/${sessionId}/messages`, { parts: [{ type: 'text', text: `scenario:text chars=${20 + i} delta=8` }] });
    await waitIdle(server.url, sessionId);
  }

  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  const pageErrors = watchErrors(page);
  try {
    await page.goto(`${server.url}/#${encodeURIComponent(sessionId)}`);
    await page.locator('[data-testid="status"][data-status="live"]').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length > 0);
    const first = await page.locator('[data-testid="message"]').count();
    assert.ok(first < 2 * TURNS, `the first read is one page, not the whole history (${first} messages)`);
    assert.ok(await page.getByTestId('load-older').isVisible(), 'older history is offered');

    // Scroll to the top: the page loads the rest and keeps the reader's place.
    const anchorId = await page.locator('[data-testid="message"]').first().getAttribute('data-message-id');
    await page.getByTestId('messages').evaluate((el) => el.scrollTo(0, 0));
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="message"]').length === n, 2 * TURNS, { timeout: 30000 });
    await page.getByText('Beginning of the session').waitFor();
    const anchorTop = await page.locator(`[data-message-id="${anchorId}"]`).evaluate((el) => {
      const box = el.closest('[data-testid="messages"]').getBoundingClientRect();
      return el.getBoundingClientRect().top - box.top;
    });
    assert.ok(anchorTop >= 0 && anchorTop < 700, `the message read before stays in view (at ${anchorTop}px)`);
    assertSameMessages(await pageMessages(page), expected(await serverSnapshot(server.url, sessionId)));

    // A question: the agent asks, the user answers in the card's box.
    await page.getByTestId('scenario').filter({ hasText: 'question' }).click();
    await page.getByTestId('answer-input').fill('teal');
    await page.getByTestId('answer-submit').click();
    await page.locator('[data-testid="interaction"][data-status="resolved"]').waitFor({ timeout: 30000 });
    await page.waitForFunction(settled, null, { timeout: 30000 });
    assert.match(await page.getByTestId('interaction-result').last().textContent(), /teal/);
    await page.getByText('You answered "teal"').waitFor();
    assertSameMessages(await pageMessages(page), expected(await serverSnapshot(server.url, sessionId)));
    assert.deepEqual(pageErrors, [], 'no page errors');
  } finally {
    await context.close();
  }
});

// StreamText is what keeps a 100,000-character answer smooth: it appends
// each delta to the last text node and cuts the text into blocks, so the
// browser lays out one block per frame. Checked here against the naive way
// (one growing text node), with a layout forced after every delta as a
// rendering frame would: the chunked text must be exact and much cheaper
// (the gap grows with the length: one text node costs O(length) per delta).
test('stream text: appends are exact and stay cheap as the text grows', { timeout: 2 * 60 * 1000 }, async (t) => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  const page = await context.newPage();
  try {
    await page.goto(`${server.url}/`);
    const r = await page.evaluate(async () => {
      const { StreamText } = await import('/stream-text.js');
      const words = ['lorem', 'ipsum', 'café', 'naïve', 'über', 'smörgåsbord', '—', 'tempor', 'dolor'];
      let text = '';
      for (let i = 0; text.length < 40000; i++) text += (text ? ' ' : '') + words[(i * 7) % words.length];
      text += '\nlast line\n\nafter a blank line';
      const run = (view) => {
        const box = document.createElement('div');
        box.className = 'text';
        box.style.cssText = 'position:fixed;inset:0;overflow:auto;white-space:pre-wrap';
        box.append(view.el);
        document.body.append(box);
        const t0 = performance.now();
        for (let n = 50; n < text.length + 50; n += 50) {
          view.set(text.slice(0, n), true);
          box.scrollTop = box.scrollHeight; // forces layout, as a frame does
        }
        const ms = performance.now() - t0;
        const streamed = view.el.textContent;
        const chunks = view.el.childElementCount;
        view.set(text, false); // done: joined into one block
        const joined = view.el.childElementCount;
        const final = view.el.textContent;
        view.set('something else', false); // not an extension: replaced
        const replaced = view.el.textContent;
        box.remove();
        return { ms, ok: streamed === text && final === text, chunks, joined, replaced };
      };
      const naive = () => {
        const el = document.createElement('div');
        const node = document.createTextNode('');
        el.append(node);
        let shown = '';
        return { el, set(s) { node.appendData(s.slice(shown.length)); shown = s; } };
      };
      const chunked = run(new StreamText('text'));
      const plain = run(naive());
      return { chunked, plainMs: plain.ms };
    });
    t.diagnostic(`~800 deltas up to 40,000 chars, layout forced after each: chunked ${r.chunked.ms.toFixed(0)} ms, one text node ${r.plainMs.toFixed(0)} ms`);
    assert.ok(r.chunked.ok, 'the chunked text equals the streamed text, before and after joining');
    assert.ok(r.chunked.chunks > 5, `the streamed text was cut into blocks (${r.chunked.chunks})`);
    assert.equal(r.chunked.joined, 1, 'a done text is one block');
    assert.equal(r.chunked.replaced, 'something else');
    assert.ok(r.chunked.ms * 2 < r.plainMs, `chunked ${r.chunked.ms.toFixed(0)} ms vs one text node ${r.plainMs.toFixed(0)} ms`);
  } finally {
    await context.close();
  }
});

// A long answer's DOM is built once: a long first view is shown plain
// without lexing it as markdown, streamed text is appended, and a done text
// that extends what is shown (a snapshot re-read after a resync) is appended
// too, into the same chunks: nothing is rebuilt or laid out again at done.
test('stream text: a long answer keeps its chunks at done and across a re-read', { timeout: 60000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  const page = await context.newPage();
  try {
    await page.goto(`${server.url}/`);
    const r = await page.evaluate(async () => {
      const { StreamText } = await import('/stream-text.js');
      const { MarkdownView } = await import('/markdown.js');
      const words = ['lorem', 'ipsum', 'café', 'naïve', 'über', '—', 'tempor', 'dolor'];
      const lorem = (n) => {
        let text = '';
        for (let i = 0; text.length < n; i++) text += (text ? ' ' : '') + words[(i * 5) % words.length];
        return text;
      };
      const text = lorem(300000);
      const out = {};

      // The agent's markdown view: first seen at 50,000 characters of one paragraph.
      const md = new MarkdownView('t');
      document.body.append(md.el);
      md.set(text.slice(0, 50000), true);
      out.lexedFirstView = md.stats.lexedChars;
      const first = md.el.querySelector('.chunk');
      for (let n = 50000; n < 200000; n += 5000) md.append(text.slice(n, n + 5000));
      md.set(text, false); // done, re-read with the rest of the text
      await md.whenRendered(); // the rest is appended in slices
      out.lexedStreaming = md.stats.lexedChars;
      out.md = { same: md.el.querySelector('.chunk') === first, exact: md.el.textContent === text, chunks: md.el.querySelectorAll('.chunk').length };
      md.el.remove();

      // A blank line split across two appends still closes a long paragraph.
      const md2 = new MarkdownView('t');
      md2.set(text.slice(0, 10000), true);
      await md2.whenRendered(); // a long first view is fed in slices
      md2.append('\n');
      const boldBefore = md2.el.querySelector('strong') !== null;
      md2.append('\nNext **paragraph**');
      out.joint = { boldBefore, bold: md2.el.querySelector('strong')?.textContent, plain: md2.el.querySelector('.md-plain') !== null };

      // StreamText alone: streamed, then done with more text.
      const st = new StreamText('text');
      document.body.append(st.el);
      st.set(text.slice(0, 100000), true);
      const firstChunk = st.el.firstChild;
      st.set(text, false);
      out.st = { same: st.el.firstChild === firstChunk, exact: st.el.textContent === text, resets: st.stats.resets, chunks: st.el.childElementCount };
      st.set('short and new', false); // not an extension: shown anew, as one block
      out.st.replaced = [st.el.textContent, st.el.childElementCount, st.stats.resets];
      st.el.remove();
      return out;
    });
    assert.equal(r.lexedFirstView, 0, 'a 50,000-character paragraph is not lexed as markdown');
    assert.equal(r.lexedStreaming, 0, 'nor is what is appended to it');
    assert.ok(r.md.same && r.md.exact, `markdown view: first chunk kept ${r.md.same}, text exact ${r.md.exact}`);
    assert.ok(r.md.chunks > 100, `markdown view: ${r.md.chunks} chunks`);
    assert.deepEqual(r.joint, { boldBefore: false, bold: 'paragraph', plain: false }, 'the paragraph closed, the next one is markdown');
    assert.ok(r.st.same && r.st.exact, `stream text: first chunk kept ${r.st.same}, text exact ${r.st.exact}`);
    assert.equal(r.st.resets, 1, 'built once (by its constructor), then only appended to');
    assert.ok(r.st.chunks > 100, `stream text: ${r.st.chunks} chunks`);
    assert.deepEqual(r.st.replaced, ['short and new', 1, 2]);
  } finally {
    await context.close();
  }
});
