// The demo page as a chat UI, in headless Chromium against the real server:
// markdown (sanitized, highlighted, rendered incrementally), the quiet stop,
// Retry, notes, folded tool cards, one card per question, reasoning, file
// downloads, toasts clear of the composer, the approval menu, titles, rename
// and delete, jump to latest, debug info, keyboard, and dark mode. Each
// scenario leaves a light and a dark screenshot in artifacts/ (gitignored).
//
// Run: cd js && node --test demo-test/chat-ui.test.js   (needs Go and /usr/bin/chromium)

import { test, before, after } from '../test/harness/timed.js';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startDemo, settled, artifacts, watchErrors } from './harness.js';

let server; // {url, browser, close}

before(async () => {
  server = await startDemo({ speed: '3ms' });
  await mkdir(artifacts, { recursive: true });
}, { timeout: 12 * 60 * 1000 });

after(async () => {
  await server?.close();
});

// withPage runs fn with a fresh page (light scheme) and fails on any page
// error. viewport and colorScheme can be overridden.
async function withPage(fn, { allowErrors = null, ...opts } = {}) {
  const context = await server.browser.newContext({ viewport: { width: 1200, height: 820 }, colorScheme: 'light', ...opts });
  const page = await context.newPage();
  const errors = watchErrors(page);
  try {
    await fn(page, context);
    assert.deepEqual(errors.filter((e) => !allowErrors?.test(e)), [], 'no page errors');
  } finally {
    await context.close();
  }
}

// newSession opens the page on a new session, live: through the sidebar's
// button, or (phone: the sidebar is folded) the empty state's.
async function newSession(page) {
  await page.goto(`${server.url}/`);
  const wide = page.viewportSize().width > 760;
  await page.getByTestId(wide ? 'new-session' : 'start-session').click();
  await page.waitForFunction(() => location.hash.length > 1 && window.__agentsync?.session);
  await page.locator('[data-testid="status"][data-status="live"]').waitFor();
  return page.evaluate(() => window.__agentsync.sessionId);
}

async function say(page, text) {
  await page.getByTestId('input').fill(text);
  await page.getByTestId('input').press('Enter');
}

// turn sends text and waits for its answer to finish: two more messages
// (or message segments) than before, none streaming.
async function turn(page, text) {
  const before = await page.locator('[data-testid="message"]').count();
  await say(page, text);
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="message"]').length >= n, before + 2);
  await page.waitForFunction(settled, null, { timeout: 30000 });
}

// shots saves the page in light and dark: artifacts/ui-<name>-<scheme>.png.
async function shots(page, name) {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: path.join(artifacts, `ui-${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
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

test('markdown: lists, highlighted code with Copy, a table, and raw HTML left inert', { timeout: 120000 }, async () => {
  await withPage(async (page, context) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const id = await newSession(page);
    await turn(page, 'scenario:markdown');
    const md = page.locator('[data-role="agent"] .markdown').last();
    assert.equal(await md.locator('h2').textContent(), 'Markdown, streamed');
    assert.equal(await md.locator('ol > li').count(), 3, 'the numbered list');
    assert.equal(await md.locator('ul > li').count(), 2, 'the bullet list');
    assert.equal(await md.locator('strong').first().textContent(), 'bold');
    const block = md.locator('[data-testid="code-block"][data-lang="go"]');
    assert.equal(await block.count(), 1, 'one go code block');
    assert.ok(await block.locator('.hljs-keyword').count() > 0, 'the code is highlighted');
    assert.equal(await md.locator('table tr').count(), 3, 'the table');
    const link = md.locator('a[href="https://example.com"]');
    assert.equal(await link.getAttribute('target'), '_blank');
    assert.match(await link.getAttribute('rel'), /noopener/);

    // The payloads in the answer never reached the DOM as live markup.
    const inert = await page.evaluate(() => ({
      pwned: window.__pwned,
      scripts: document.querySelectorAll('#message-list script').length,
      handlers: [...document.querySelectorAll('#message-list *')].filter((n) => [...n.attributes].some((a) => a.name.startsWith('on'))).length,
      jsLinks: [...document.querySelectorAll('#message-list a')].filter((a) => /^\s*javascript:/i.test(a.getAttribute('href') ?? '')).length,
    }));
    assert.deepEqual(inert, { pwned: undefined, scripts: 0, handlers: 0, jsLinks: 0 });
    assert.match(await md.locator('blockquote').textContent(), /Raw HTML is sanitized/);

    await block.getByTestId('copy-code').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="copy-code"]').textContent === 'Copied');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, 'func add(a, b int) int {\n\treturn a + b // highlighted\n}\n');

    // The whole reply copies as its markdown source, as the server has it.
    const reply = page.locator('[data-role="agent"]').last();
    await reply.hover();
    await reply.getByTestId('copy-message').click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="copy-message"]')].some((b) => b.textContent === 'Copied'));
    const items = (await api('GET', `/v1/sessions/${id}/messages`)).body.items;
    const source = items.at(-1).parts.find((p) => p.type === 'text').text;
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), source);
    await shots(page, 'markdown');
  });
});

// The renderer, fed a long markdown answer delta by delta as a stream
// would: the blocks the stream has moved past are rendered once and kept
// (same DOM nodes), each frame re-renders only the open block, and the
// final DOM equals a full parse.
test('markdown: incremental rendering touches only the open block', { timeout: 60000 }, async (t) => {
  await withPage(async (page) => {
    await page.goto(`${server.url}/`);
    const r = await page.evaluate(async () => {
      const { MarkdownView, renderMarkdown } = await import('/markdown.js');
      let text = '';
      for (let i = 0; i < 120; i++) {
        text += i % 3 === 0 ? `## Part ${i}\n\n` : '';
        text += `Paragraph ${i} with **bold** and \`code\`.\n\n- item a${i}\n- item b${i}\n\n`;
        if (i % 10 === 0) text += '```js\nconst x = ' + i + ';\n```\n\n';
      }
      const view = new MarkdownView('t');
      document.body.append(view.el);
      let naive = 0;
      let firstHeading = null;
      for (let n = 40; n < text.length + 40; n += 40) {
        view.set(text.slice(0, n), true);
        naive += Math.min(n, text.length);
        firstHeading ??= view.el.querySelector('h2');
      }
      const keptWhileStreaming = firstHeading?.isConnected === true;
      const streamedText = view.el.textContent;
      view.set(text, false);
      const full = document.createElement('div');
      full.append(renderMarkdown(text));
      const out = {
        length: text.length,
        naive,
        tailChars: view.stats.tailChars,
        keptWhileStreaming,
        sameAsFull: view.el.innerHTML.replace(/<div class="md-open"><\/div>$/, '') === full.innerHTML,
        items: view.el.querySelectorAll('li').length,
        streamedHasLastItem: streamedText.includes('item b119'),
      };
      view.el.remove();
      return out;
    });
    t.diagnostic(`${r.length} chars in 40-char deltas: ${r.tailChars} chars re-rendered in all (open blocks only), ${r.naive} for a full re-render per delta (${(r.naive / r.tailChars).toFixed(0)}x)`);
    assert.ok(r.keptWhileStreaming, 'a settled block is never re-created while the stream goes on');
    assert.ok(r.sameAsFull, 'the done DOM equals a full parse');
    assert.equal(r.items, 240);
    assert.ok(r.streamedHasLastItem);
    // Re-rendering the whole text per delta would parse `naive` characters.
    assert.ok(r.tailChars * 20 < r.naive, `re-rendered ${r.tailChars} chars over the stream, a full re-render per delta ${r.naive}`);
  });
});

test('stop: a quiet "Stopped" note, no error card; Escape stops; jump to latest', { timeout: 120000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    await say(page, 'scenario:long chars=60000 delta=20');
    await page.waitForFunction(() => document.querySelector('[data-testid="part-text"].streaming')?.textContent.length > 3000, null, { timeout: 30000 });
    // A reader who does not scroll follows the stream.
    const atBottom = () => {
      const sc = document.querySelector('[data-testid="messages"]');
      return sc.scrollHeight - sc.scrollTop - sc.clientHeight < 80;
    };
    await page.waitForFunction(() => document.querySelector('[data-testid="part-text"].streaming')?.textContent.length > 8000, null, { timeout: 30000 });
    assert.ok(await page.evaluate(atBottom), 'the view follows the stream');
    assert.ok(await page.getByTestId('jump-latest').isHidden());
    // Scrolled up during the stream: the page offers the way back.
    await page.getByTestId('messages').evaluate((el) => el.scrollTo(0, 0));
    await page.getByTestId('jump-latest').waitFor({ state: 'visible', timeout: 10000 });
    await page.getByTestId('jump-latest').click();
    await page.waitForFunction(atBottom);
    assert.ok(await page.getByTestId('jump-latest').isHidden());

    await page.keyboard.press('Escape');
    await page.waitForFunction(settled, null, { timeout: 30000 });
    await page.getByTestId('stopped-note').waitFor();
    assert.equal(await page.getByTestId('stopped-note').textContent(), 'Stopped');
    assert.equal(await page.locator('[data-testid="error"]').count(), 0, 'no error card after a stop');
    assert.equal(await page.locator('[data-testid="action"][data-action-type="stop"]:visible').count(), 0, 'the stop reads once');
    assert.ok(await page.getByTestId('stop').isHidden());
    await shots(page, 'stopped');
  });
});

test('toasts never cover Send or Stop, on a desktop and a phone', { timeout: 120000 }, async () => {
  for (const viewport of [{ width: 1200, height: 820 }, { width: 390, height: 760 }]) {
    await withPage(async (page) => {
      await newSession(page);
      await say(page, 'scenario:long chars=40000 delta=10');
      await page.getByTestId('stop').waitFor({ state: 'visible' });
      await page.evaluate(() => {
        for (let i = 0; i < 6; i++) window.__agentsync.toast(`A rather long notification number ${i} that wraps over more than one line of the toast`, i % 2 ? 'bad' : 'info');
      });
      const boxes = await page.evaluate(() => {
        const r = (el) => el.getBoundingClientRect().toJSON();
        return { toasts: [...document.querySelectorAll('.toast')].map(r), send: r(document.getElementById('send')), stop: r(document.getElementById('stop')) };
      });
      const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      assert.equal(boxes.toasts.length, 4, 'at most four at once');
      for (const t of boxes.toasts) {
        assert.ok(!overlaps(t, boxes.send), `toast ${JSON.stringify(t)} covers Send at ${viewport.width}px`);
        assert.ok(!overlaps(t, boxes.stop), `toast ${JSON.stringify(t)} covers Stop at ${viewport.width}px`);
      }
      await shots(page, `toasts-${viewport.width}`);
      await page.getByTestId('stop').click();
      await page.waitForFunction(settled, null, { timeout: 30000 });
    }, { viewport });
  }
});

test('tools fold to one line when done; a question is one card; reasoning folds with a label', { timeout: 120000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    await turn(page, 'scenario:tools city=Oslo');
    const tools = page.locator('[data-testid="tool"]');
    assert.equal(await tools.count(), 2);
    for (let i = 0; i < 2; i++) {
      const tool = tools.nth(i);
      assert.equal(await tool.getAttribute('data-state'), 'output-available');
      assert.equal(await tool.locator('details').evaluate((d) => d.open), false, 'a done tool is folded');
      const box = await tool.boundingBox();
      assert.ok(box.height < 50, `a folded tool is one line (${box.height}px)`);
      assert.ok(await tool.getByTestId('tool-output').isHidden());
    }
    await tools.first().getByTestId('tool-head').click();
    await tools.first().getByTestId('tool-output').waitFor({ state: 'visible' });
    assert.match(await tools.first().getByTestId('tool-output').textContent(), /Oslo|28|°/);
    await shots(page, 'tools');

    await say(page, 'scenario:question');
    await page.getByTestId('answer-input').waitFor();
    assert.equal(await page.locator('[data-testid="tool"]:visible').count(), 2, 'the ask_user call has no card of its own');
    await page.getByTestId('answer-input').fill('teal');
    await page.getByTestId('answer-submit').click();
    await page.waitForFunction(settled, null, { timeout: 30000 });
    assert.equal(await page.locator('[data-testid="interaction"][data-kind="question"]').count(), 1, 'one card per question');
    assert.equal(await page.locator('[data-testid="tool"]:visible').count(), 2);
    assert.match(await page.getByTestId('interaction-result').last().textContent(), /teal/);
    await shots(page, 'question');

    await turn(page, 'scenario:reasoning');
    const reasoning = page.locator('.part-reasoning').last();
    assert.match(await reasoning.getByTestId('reasoning-label').textContent(), /^Thought (for|·)/);
    assert.equal(await reasoning.locator('details').evaluate((d) => d.open), false, 'a finished reasoning is folded');
    assert.equal(await reasoning.locator('.chevron').count(), 1);
    assert.equal(await reasoning.locator('summary svg').evaluate((s) => getComputedStyle(s).animationName), 'none', 'no spinner once done');
    await shots(page, 'reasoning');
  });
});

test('a steer: the reply shows after the message it answers, placed by the server\'s read marker', { timeout: 90000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    await say(page, 'scenario:approval');
    await page.getByTestId('approve').waitFor();
    await say(page, 'also cc the boss'); // sent while the turn runs: a steer
    await page.locator('[data-role="user"]', { hasText: 'also cc the boss' }).waitFor();
    await page.getByTestId('approve').click();
    await page.waitForFunction(settled, null, { timeout: 30000 });
    const shown = await page.$$eval('[data-testid="message"]', (nodes) =>
      nodes.map((n) => ({ role: n.dataset.role, id: n.dataset.messageId, sequence: n.dataset.sequence, segment: n.dataset.segment ?? '', text: n.querySelector('.parts').textContent })));
    const steer = shown.findIndex((m) => m.role === 'user' && m.text.includes('also cc the boss'));
    const asked = shown.findIndex((m) => m.role === 'agent' && m.text.includes('I will send the report'));
    const reply = shown.findIndex((m) => m.role === 'agent' && m.text.includes('You said: “also cc the boss”'));
    assert.ok(asked >= 0 && steer > asked && reply > steer, `order: ${JSON.stringify(shown.map((m) => `${m.role}:${m.text.slice(0, 30)}`))}`);
    assert.equal(shown[reply].id, shown[asked].id, 'one agent message, shown in two segments');
    assert.equal(shown[reply].segment, shown[steer].sequence, 'the segment follows the steer it read');
    assert.equal(await page.locator('[data-testid="data"]:visible').count(), 0, 'the marker itself is not shown');
    await shots(page, 'steer');
  });
});

test('a file part downloads under its name and shows its size', { timeout: 60000 }, async () => {
  await withPage(async (page, context) => {
    await newSession(page);
    await turn(page, 'scenario:file');
    const link = page.getByTestId('file-link');
    assert.match(await page.getByTestId('file-meta').textContent(), /30 bytes/);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.equal(download.suggestedFilename(), 'hello.txt');
    assert.equal(await readFile(await download.path(), 'utf8'), 'hello from the scripted model\n');
    assert.equal(context.pages().length, 1, 'no about:blank tab');
    await shots(page, 'file');
  }, { acceptDownloads: true });
});

test('approval menu shows the session mode, says why send_email asks; settings changes are notes', { timeout: 120000 }, async () => {
  await withPage(async (page) => {
    const id = await newSession(page);
    const listed = (await api('GET', '/v1/sessions')).body.items.find((s) => s.session_id === id);
    assert.equal(listed.approval_mode, 'auto');
    assert.equal(await page.getByTestId('approval-mode').inputValue(), 'auto', 'the menu equals the session');

    await say(page, 'scenario:approval');
    await page.getByTestId('approve').waitFor();
    assert.match(await page.getByTestId('approval-why').textContent(), /send_email always asks before it runs, whatever the approval mode/);
    await shots(page, 'approval');
    await page.getByTestId('approve').click();
    await page.waitForFunction(settled, null, { timeout: 30000 });

    // Changed elsewhere (another tab, a script): a reload shows it.
    assert.equal((await api('POST', `/v1/sessions/${id}/actions`, { action_type: 'set_approval_mode', value: 'ask' })).status, 200);
    await page.reload();
    await page.locator('[data-testid="status"][data-status="live"]').waitFor();
    assert.equal(await page.getByTestId('approval-mode').inputValue(), 'ask');

    // The change is a note, not an agent reply, and not counted.
    await page.locator('.message.note-message').waitFor();
    const counted = await page.locator('[data-testid="message"]:not(.note-message)').count();
    await page.waitForFunction((n) => document.getElementById('session-sub').textContent.startsWith(`${n} messages`), counted);
    assert.equal(await page.locator('.note-message .avatar:visible').count(), 0);
    assert.match(await page.locator('.note-message [data-testid="action"]').textContent(), /Approval mode set to ask/);
    await shots(page, 'note');
  });
});

test('Retry shows on a recoverable error only when the server lists the retry action', { timeout: 90000 }, async () => {
  // A server that does not list it (an older one: the session JSON's "actions" without retry).
  await withPage(async (page) => {
    await page.route('**/v1/sessions', async (route) => {
      const res = await route.fetch();
      const json = await res.json();
      for (const s of json.items ?? [json]) s.actions = (s.actions ?? []).filter((a) => a !== 'retry');
      await route.fulfill({ response: res, json });
    });
    // An older server has no live session list either: the socket that
    // would bring the list (with retry) answers nothing.
    await page.routeWebSocket(/\/v1\/sessions\/subscribe/, () => {});
    await newSession(page);
    await turn(page, 'scenario:error chars=80');
    await page.locator('[data-testid="error"]').waitFor();
    assert.ok(await page.getByTestId('retry').isHidden(), 'no Retry without a retry action on the server');
  });
  // This server lists it: the button posts it.
  await withPage(async (page) => {
    let posted = null;
    await page.route('**/v1/sessions/*/actions', async (route) => {
      posted = route.request().postDataJSON();
      await route.fulfill({ status: 200, json: {} });
    });
    const id = await newSession(page);
    const listed = await page.evaluate(async (sid) => (await (await fetch(`/v1/sessions`)).json()).items.find((s) => s.session_id === sid)?.actions, id);
    assert.ok(listed?.includes('retry'), `the server lists retry: ${JSON.stringify(listed)}`);
    await turn(page, 'scenario:error chars=80');
    await page.getByTestId('retry').click();
    await page.waitForFunction(() => !document.querySelector('[data-testid="retry"]').disabled);
    assert.deepEqual(posted, { action_type: 'retry' });
    await shots(page, 'error-retry');
  });
});

test('sessions: titled by the first message, renamed, deleted (other tabs told), sorted by activity', { timeout: 120000 }, async () => {
  await withPage(async (page, context) => {
    const first = await newSession(page);
    await turn(page, 'Plan a weekend in Oslo');
    await page.waitForFunction((id) => document.querySelector(`[data-session-id="${id}"] [data-testid="session-title"]`)?.textContent === 'Plan a weekend in Oslo', first);
    assert.equal(await page.getByTestId('session-title').first().textContent(), 'Plan a weekend in Oslo');

    const second = await newSession(page);
    await turn(page, 'scenario:text chars=20');
    // The session active last comes first.
    await page.waitForFunction((id) => document.querySelector('[data-testid="session-item"]')?.dataset.sessionId === id, second);

    // Rename the first from the sidebar.
    const item = page.locator(`[data-testid="session-item"][data-session-id="${first}"]`);
    await item.hover();
    await item.getByTestId('session-rename').click();
    await page.getByTestId('title-input').fill('Oslo trip');
    await page.getByTestId('title-input').press('Enter');
    await page.waitForFunction((id) => document.querySelector(`[data-session-id="${id}"] [data-testid="session-title"]`)?.textContent === 'Oslo trip', first);
    assert.equal(await page.locator('#session-title').textContent(), 'Oslo trip');
    assert.equal((await api('GET', '/v1/sessions')).body.items.find((s) => s.session_id === first).title, 'Oslo trip');
    await shots(page, 'sidebar');

    // Delete it while another tab watches it.
    const other = await context.newPage();
    await other.goto(`${server.url}/#${first}`);
    await other.locator('[data-testid="status"][data-status="live"]').waitFor();
    await item.hover();
    await item.getByTestId('session-delete').click();
    await page.getByTestId('confirm-delete').click();
    await page.waitForFunction((id) => !document.querySelector(`[data-session-id="${id}"]`) && location.hash === '', first);
    assert.equal((await api('GET', `/v1/sessions/${first}/messages`)).status, 404);
    await other.locator('[data-testid="banner"]', { hasText: 'This session was deleted.' }).waitFor({ timeout: 15000 });
    assert.equal(await other.getByTestId('status').getAttribute('data-status'), 'closed');
    assert.ok(await other.getByTestId('input').isDisabled());
    await other.close();
  });
});

test('an unknown session resets the composer of the previous one', { timeout: 90000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    await say(page, 'scenario:long chars=40000 delta=10');
    await page.getByTestId('stop').waitFor({ state: 'visible' });
    assert.equal(await page.getByTestId('input').getAttribute('placeholder'), 'Steer the turn…');
    await page.evaluate(() => (location.hash = '#ses_doesnotexist'));
    await page.locator('[data-testid="banner"][data-kind="bad"]').waitFor();
    assert.ok(await page.getByTestId('stop').isHidden(), 'no Stop from the previous session');
    assert.equal(await page.getByTestId('input').getAttribute('placeholder'), 'Message the agent…');
    assert.ok(await page.getByTestId('input').isDisabled());
  }, { allowErrors: /Failed to load resource: .* 404/ }); // the probe that finds no such session
});

test('keyboard and debug: Shift+Enter is a new line, Enter sends; debug data behind its switch', { timeout: 60000 }, async () => {
  await withPage(async (page) => {
    await newSession(page);
    const input = page.getByTestId('input');
    await input.click();
    await page.keyboard.type('first line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    assert.equal(await input.inputValue(), 'first line\nsecond line');
    assert.equal(await page.locator('[data-testid="message"]').count(), 0, 'Shift+Enter does not send');
    await page.keyboard.press('Enter');
    await page.waitForFunction(settled, null, { timeout: 30000 });
    assert.equal(await page.locator('[data-role="user"] [data-testid="part-text"]').textContent(), 'first line\nsecond line');

    assert.ok(await page.getByTestId('message-meta').first().isHidden(), 'sequence and revision hidden by default');
    await page.getByTestId('settings').click();
    await page.getByTestId('debug').check();
    assert.match(await page.getByTestId('message-meta').first().textContent(), /#1 · rev 1/);
    await page.getByTestId('digest').waitFor({ state: 'visible' });
  });
});

test('dark mode follows prefers-color-scheme', { timeout: 60000 }, async () => {
  const luminance = (page) => page.evaluate(() => {
    const [r, g, b] = getComputedStyle(document.documentElement).backgroundColor.match(/\d+/g).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  });
  for (const scheme of ['light', 'dark']) {
    await withPage(async (page) => {
      await newSession(page);
      await turn(page, 'scenario:help');
      const l = await luminance(page);
      if (scheme === 'dark') assert.ok(l < 0.2, `dark background (luminance ${l})`);
      else assert.ok(l > 0.8, `light background (luminance ${l})`);
      await page.screenshot({ path: path.join(artifacts, `ui-help-${scheme}.png`) });
    }, { colorScheme: scheme });
  }
});

// onBranch waits until the page shows session id (the URL names it), live
// and settled with n messages.
async function onBranch(page, id, n) {
  await page.waitForFunction(([want, count]) => {
    window.__probe = { hash: location.hash, sid: window.__agentsync?.sessionId, status: window.__agentsync?.session?.status,
      n: document.querySelectorAll('[data-testid="message"]').length,
      streaming: document.querySelectorAll('[data-testid="message"][data-state="streaming"]').length };
    const a = window.__agentsync;
    return decodeURIComponent(location.hash.slice(1)) === want && a?.sessionId === want && a.session?.status === 'live' &&
      document.querySelectorAll('[data-testid="message"]').length === count &&
      document.querySelectorAll('[data-testid="message"][data-state="streaming"]').length === 0;
  }, [id, n], { timeout: 30000 }).catch(async (e) => {
    throw new Error(`${e.message}: want ${id} with ${n}, page ${JSON.stringify(await page.evaluate(() => window.__probe))}`);
  });
}

// pageEqualsServer: the messages on the page (and in the view) are the
// server's path of the open session, by id, in order.
async function pageEqualsServer(page) {
  const id = await page.evaluate(() => window.__agentsync.sessionId);
  const { body } = await api('GET', `/v1/sessions/${encodeURIComponent(id)}/messages?limit=200`);
  const want = body.items.map((m) => m.message_id);
  const dom = await page.evaluate(() => [...document.querySelectorAll('[data-testid="message"]')].map((e) => e.dataset.messageId));
  const view = await page.evaluate(() => window.__agentsync.session.view.messages.map((m) => m.message_id));
  assert.deepEqual(dom, want, `the page shows the server's path of ${id}`);
  assert.deepEqual(view, want, `the view is the server's path of ${id}`);
  return want;
}

// arrows reads the ‹ i / n › of the message at sequence ('' when none).
const arrows = (page, seq) => page.evaluate((s) => {
  const nav = document.querySelector(`[data-testid="message"][data-sequence="${s}"] [data-testid="branch-nav"]`);
  return nav && !nav.hidden ? nav.querySelector('[data-testid="branch-of"]').textContent : '';
}, seq);

test('the conversation tree: regenerate twice and edit keep every version; arrows, reload and a cut mid-stream', { timeout: 180000 }, async () => {
  await withPage(async (page) => {
    const root = await newSession(page);
    await turn(page, 'scenario:text chars=40');
    await turn(page, 'scenario:text chars=30');
    const orig = await pageEqualsServer(page);
    const regen = page.locator('[data-testid="regenerate"]:not([hidden])');
    assert.equal(await regen.count(), 1, 'one Regenerate, on the newest reply');

    // Regenerate twice: each is a fork before the reply; the page moves to
    // it (the URL follows) and the old reply stays a version.
    const forks = [];
    for (let i = 0; i < 2; i++) {
      const from = await page.evaluate(() => window.__agentsync.sessionId);
      await regen.click();
      await page.waitForFunction((f) => window.__agentsync?.sessionId && window.__agentsync.sessionId !== f, from);
      const id = await page.evaluate(() => window.__agentsync.sessionId);
      await onBranch(page, id, 4);
      forks.push(id);
      const path = await pageEqualsServer(page);
      assert.deepEqual(path.slice(0, 3), orig.slice(0, 3), 'the question and what came before are shared');
      assert.notEqual(path[3], orig[3], 'a new reply');
      await page.waitForFunction(() => document.querySelector('[data-sequence="4"] [data-testid="branch-nav"]:not([hidden])'));
    }
    assert.equal(await arrows(page, 4), '3 / 3');
    const users = await page.evaluate(() => window.__agentsync.session.view.messages.filter((m) => m.role === 'user').map((m) => m.parts[0].text));
    assert.deepEqual(users, ['scenario:text chars=40', 'scenario:text chars=30'], 'Regenerate does not post the question again');

    // The arrows switch back: ‹ to the first regeneration, ‹ to the original.
    await page.locator('[data-sequence="4"] [data-testid="branch-prev"]').click();
    await onBranch(page, forks[0], 4);
    await page.waitForFunction(() => document.querySelector('[data-sequence="4"] [data-testid="branch-of"]')?.textContent === '2 / 3');
    await page.locator('[data-sequence="4"] [data-testid="branch-prev"]').click();
    await onBranch(page, root, 4);
    assert.deepEqual(await pageEqualsServer(page), orig);
    await page.waitForFunction(() => document.querySelector('[data-sequence="4"] [data-testid="branch-of"]')?.textContent === '1 / 3');

    // Edit the second question in place: Enter sends the fork.
    await page.locator('[data-sequence="3"]').hover();
    await page.locator('[data-sequence="3"] [data-testid="edit-message"]').click();
    await page.getByTestId('edit-input').fill('scenario:long chars=20000 delta=8');
    await page.getByTestId('edit-input').press('Enter');
    await page.waitForFunction((r) => window.__agentsync?.sessionId && window.__agentsync.sessionId !== r, root);
    const edit = await page.evaluate(() => window.__agentsync.sessionId);
    // Mid-stream on the branch: the connection drops and the view heals.
    await page.waitForFunction(() => document.querySelector('[data-testid="message"][data-state="streaming"] [data-testid="part-text"]')?.textContent.length > 200, null, { timeout: 30000 });
    await page.getByTestId('drop-connection').click();
    await onBranch(page, edit, 4);
    const edited = await pageEqualsServer(page);
    assert.deepEqual(edited.slice(0, 2), orig.slice(0, 2));
    await page.waitForFunction(() => document.querySelector('[data-sequence="3"] [data-testid="branch-of"]')?.textContent === '2 / 2');
    assert.equal(await arrows(page, 4), '', 'the edit has one reply');

    // Reload: the URL names the branch, the page shows its path again.
    await page.reload();
    await onBranch(page, edit, 4);
    assert.deepEqual(await pageEqualsServer(page), edited);
    await page.waitForFunction(() => document.querySelector('[data-sequence="3"] [data-testid="branch-of"]')?.textContent === '2 / 2');

    // The sidebar lists the conversation once.
    const items = await page.evaluate(() => [...document.querySelectorAll('[data-testid="session-item"]')].filter((li) => li.dataset.root === li.dataset.root).map((li) => li.dataset.root));
    assert.equal(items.filter((r) => r === root).length, 1, 'one entry for the conversation');
    await shots(page, 'tree');
  });
});
