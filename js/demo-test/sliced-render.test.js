// A long text that reaches the demo page at once (a page load, the snapshot
// re-read after a resync, the rest of an answer when it is done) is rendered
// a slice at a time in tasks of its own (markdown.js #feed), never lexed,
// sanitized or laid out whole in one task; what streamed stays.
//
// Run: cd js && node --test demo-test/sliced-render.test.js (needs Go and /usr/bin/chromium)

import { test, before, after } from '../test/harness/timed.js';
import assert from 'node:assert/strict';
import { startDemo, settled, answerShown, watchErrors } from './harness.js';

let demo;

before(async () => {
  demo = await startDemo({ speed: '0s' });
}, { timeout: 12 * 60 * 1000 });

after(async () => {
  await demo?.close();
});

async function withPage(fn) {
  const context = await demo.browser.newContext({ viewport: { width: 1000, height: 800 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  try {
    await fn(page);
    assert.deepEqual(errors, [], 'no page errors');
  } finally {
    await context.close();
  }
}

test('markdown view: a long text set at once is rendered in slices, exactly, keeping what it showed', { timeout: 60000 }, async () => {
  await withPage(async (page) => {
    await page.goto(`${demo.url}/`);
    const r = await page.evaluate(async () => {
      const { MarkdownView, renderMarkdown, sliceStats } = await import('/markdown.js');
      const words = ['lorem', 'ipsum', 'café', 'naïve', 'über', '—', 'tempor', 'dolor', '😀'];
      const lorem = (n) => {
        let text = '';
        for (let i = 0; text.length < n; i++) text += (text ? ' ' : '') + words[(i * 5) % words.length];
        return text;
      };
      const shownLength = (v) => {
        let n = 0;
        const walk = document.createTreeWalker(v.el, NodeFilter.SHOW_TEXT);
        while (walk.nextNode()) n += walk.currentNode.length;
        return n;
      };
      const out = {};

      // A done 300,000-character paragraph, shown from scratch (a page load).
      const text = lorem(300000);
      const whole = new MarkdownView('t');
      document.body.append(whole.el);
      const drains = sliceStats.drains;
      whole.set(text, false);
      out.whole = { firstTask: shownLength(whole), rendering: whole.el.hasAttribute('data-rendering') };
      await whole.whenRendered();
      Object.assign(out.whole, {
        exact: whole.el.textContent === text,
        rendering: [out.whole.rendering, whole.el.hasAttribute('data-rendering')],
        drains: sliceStats.drains - drains,
        lexed: whole.stats.lexedChars,
        chunks: whole.el.querySelectorAll('.chunk').length,
      });
      // Shown again, done and equal: nothing to do.
      const firstChunk = whole.el.querySelector('.chunk');
      whole.set(text, false);
      out.whole.kept = whole.el.querySelector('.chunk') === firstChunk && !whole.el.hasAttribute('data-rendering');
      whole.el.remove();

      // A stream seen at 1,000 characters, then done with all 300,000 at
      // once (the snapshot re-read after a resync): the rest is appended in
      // later tasks, as the plain chunks a long paragraph streams as, not
      // parsed as one 300,000-character <p>.
      const resync = new MarkdownView('t');
      document.body.append(resync.el);
      resync.set(text.slice(0, 1000), true);
      resync.set(text, false);
      out.resync = { sameTask: shownLength(resync) };
      await resync.whenRendered();
      Object.assign(out.resync, {
        exact: resync.el.textContent === text,
        paragraphs: resync.el.querySelectorAll('p').length,
        chunks: resync.el.querySelectorAll('.chunk').length,
      });
      resync.el.remove();

      // A reconnect mid-stream: 200,000 characters at once, deltas while
      // they are still being rendered, then done.
      const mid = new MarkdownView('t');
      document.body.append(mid.el);
      mid.set(text.slice(0, 200000), true);
      for (let n = 200000; n < 250000; n += 10000) mid.append(text.slice(n, n + 10000));
      mid.set(text.slice(0, 260000), true);
      mid.set(text, false);
      await mid.whenRendered();
      out.mid = { exact: mid.el.textContent === text, rendering: mid.el.hasAttribute('data-rendering') };
      mid.el.remove();

      // Markdown blocks, 100,000 characters, done, shown from scratch: the
      // first slice's heading is the node shown at the end, and the blocks
      // equal a full parse's.
      let doc = '';
      for (let i = 0; doc.length < 100000; i++) {
        doc += `## Part ${i}\n\nParagraph ${i} with **bold**, \`code\` and a [link](https://example.com/${i}).\n\n`;
        doc += `- item a${i}\n- item b${i}\n\n> quoted ${i}\n\n\`\`\`js\nconst x${i} = ${i};\n\`\`\`\n\n`;
      }
      const blocks = new MarkdownView('t');
      document.body.append(blocks.el);
      blocks.set(doc, false);
      const heading = blocks.el.querySelector('h2');
      const firstTask = blocks.el.querySelectorAll('h2').length;
      await blocks.whenRendered();
      const full = document.createElement('div');
      full.append(renderMarkdown(doc));
      out.blocks = {
        firstTask,
        headings: blocks.el.querySelectorAll('h2').length,
        fullHeadings: full.querySelectorAll('h2').length,
        kept: heading?.isConnected === true && blocks.el.querySelector('h2') === heading,
        sameAsFull: blocks.el.innerHTML.replace(/<div class="md-open"><\/div>$/, '') === full.innerHTML,
        fullRenders: blocks.stats.fullRenders,
      };
      blocks.el.remove();
      return out;
    });
    assert.ok(r.whole.firstTask > 0 && r.whole.firstTask <= 4096, `the first task shows one slice (${r.whole.firstTask} chars)`);
    assert.deepEqual(r.whole.rendering, [true, false], 'data-rendering while slices are pending, then not');
    assert.ok(r.whole.exact, 'the text shown is exactly the text');
    assert.ok(r.whole.drains >= 2, `rendered over ${r.whole.drains} later tasks`);
    assert.equal(r.whole.lexed, 0, 'one long paragraph is not lexed as markdown');
    assert.ok(r.whole.chunks > 100, `in chunks (${r.whole.chunks})`);
    assert.ok(r.whole.kept, 'set again with the same done text: nothing rebuilt');

    assert.equal(r.resync.sameTask, 1000, 'the task that brought the rest shows none of it');
    assert.ok(r.resync.exact, 'then all of it, exactly');
    assert.equal(r.resync.paragraphs, 0, 'not parsed as one long <p>');
    assert.ok(r.resync.chunks > 100, `in chunks (${r.resync.chunks})`);

    assert.deepEqual(r.mid, { exact: true, rendering: false }, 'deltas during the slices land after them, in order');

    assert.ok(r.blocks.firstTask > 0 && r.blocks.firstTask < r.blocks.fullHeadings / 4, `first task: ${r.blocks.firstTask} of ${r.blocks.fullHeadings} headings`);
    assert.equal(r.blocks.headings, r.blocks.fullHeadings);
    assert.ok(r.blocks.kept, 'the first heading shown is the one shown at the end');
    assert.ok(r.blocks.sameAsFull, 'the blocks equal a full parse');
    assert.equal(r.blocks.fullRenders, 0, 'never parsed whole');
  });
});

test('markdown view: a blank line after a 100 KB paragraph settles it as it streamed, without lexing it', { timeout: 60000 }, async () => {
  await withPage(async (page) => {
    await page.goto(`${demo.url}/`);
    const r = await page.evaluate(async () => {
      const { MarkdownView } = await import('/markdown.js');
      let para = '';
      for (let i = 0; para.length < 100000; i++) para += `${i ? ' ' : ''}word${i % 97}`;
      const view = new MarkdownView('t');
      document.body.append(view.el);
      view.set(para.slice(0, 1000), true);
      for (let n = 1000; n < para.length; n += 1000) view.append(para.slice(n, n + 1000));
      const first = view.el.querySelector('.chunk');
      const lexedBefore = view.stats.lexedChars;
      view.append('\n'); // the blank line split across two deltas
      view.append('\nNext **paragraph**');
      const settled = view.el.querySelector(':scope > .md-plain');
      const out = {
        lexed: view.stats.lexedChars - lexedBefore,
        kept: view.el.querySelector('.chunk') === first,
        settledText: settled?.textContent === `${para}\n`,
        bold: view.el.querySelector('.md-open strong')?.textContent,
      };
      view.set(`${para}\n\nNext **paragraph** and more.`, false);
      out.done = { kept: view.el.querySelector('.chunk') === first, tail: view.el.querySelector('p')?.textContent };
      view.el.remove();
      return out;
    });
    assert.ok(r.lexed < 1000, `lexed ${r.lexed} chars at the blank line, not the paragraph`);
    assert.ok(r.kept, 'the paragraph keeps the nodes it streamed into');
    assert.ok(r.settledText, 'the settled block holds the paragraph');
    assert.equal(r.bold, 'paragraph', 'the next block is markdown');
    assert.deepEqual(r.done, { kept: true, tail: 'Next paragraph and more.' });
  });
});

test('page: a long answer loaded with the page is rendered in slices, exact, scrolled to its end', { timeout: 120000 }, async () => {
  const CHARS = 200000;
  await withPage(async (page) => {
    await page.goto(`${demo.url}/`);
    await page.getByTestId('new-session').click();
    await page.locator('[data-testid="status"][data-status="live"]').waitFor();
    // The sync core warms up while the page is idle (app.js warmWhenIdle),
    // through a scratch client: the session's own view is untouched.
    await page.waitForFunction(() => document.documentElement.dataset.coreWarm === 'done', null, { timeout: 30000 });
    assert.deepEqual(await page.evaluate(() => [window.__agentsync.session.rebuilds, window.__agentsync.session.view.messages.length]), [0, 0]);
    await page.getByTestId('input').fill(`scenario:long chars=${CHARS} delta=4000`);
    await page.getByTestId('input').press('Enter');
    await page.waitForFunction(answerShown, CHARS, { timeout: 60000 });
    await page.waitForFunction(settled, null, { timeout: 60000 });

    // The same session, opened by a fresh page: its answer arrives whole.
    await page.reload();
    await page.waitForFunction(() => window.__agentsync?.session?.status === 'live', null, { timeout: 30000 });
    await page.waitForFunction(answerShown, CHARS, { timeout: 60000 });
    const r = await page.evaluate(() => {
      const parts = document.querySelectorAll('[data-testid="part-text"]');
      const shown = parts[parts.length - 1];
      const msg = window.__agentsync.session.view.messages.at(-1);
      const sc = document.getElementById('scroller');
      return {
        exact: shown.textContent === msg.parts.find((p) => p.type === 'text').text,
        drains: window.__agentsync.slices.drains,
        chunks: shown.querySelectorAll('.chunk').length,
        fromBottom: sc.scrollHeight - sc.scrollTop - sc.clientHeight,
      };
    });
    assert.ok(r.exact, 'the page shows exactly the view\'s text');
    assert.ok(r.drains >= 2, `rendered over ${r.drains} tasks`);
    assert.ok(r.chunks > 50, `in chunks (${r.chunks})`);
    assert.ok(r.fromBottom <= 2, `scrolled to the end (${r.fromBottom}px from the bottom)`);
  });
});
