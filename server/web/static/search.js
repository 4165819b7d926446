// The sidebar's search box: GET /v1/search as one types, the hits listed
// (session title, snippet with the match marked), and a click opens the
// hit's session scrolled to the message, highlighted for a moment.
//
// The snippet is the server's HTML fragment (docs/protocol.md §3
// "Search"): text escaped, matches in <mark>. Like the rest of the page it
// never goes through innerHTML: snippetNodes() builds text nodes and
// <mark> elements from it.

import { search } from '/js/index.js';
import { el } from './util.js';

const DEBOUNCE_MS = 200;
const REVEAL_TIMEOUT_MS = 15000;
const ENTITIES = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&#34;': '"', '&#39;': "'", '&quot;': '"' };

/** snippetNodes turns a snippet into DOM nodes: text, and <mark> for the matches. */
export function snippetNodes(snippet) {
  const unescape = (s) => s.replace(/&(amp|lt|gt|quot|#34|#39);/g, (e) => ENTITIES[e]);
  const out = [];
  for (const [i, piece] of String(snippet).split(/<mark>|<\/mark>/).entries()) {
    if (!piece) continue;
    const text = unescape(piece);
    out.push(i % 2 === 1 ? el('mark', { text }) : document.createTextNode(text));
  }
  return out;
}

/**
 * mountSearch puts the search box in root. open(id) opens a session (the
 * page's router); current() is the open Session or null.
 * @param {{root: HTMLElement, base: string, token?: string, open: (id: string) => void, current: () => any}} opts
 */
export function mountSearch({ root, base, token, open, current }) {
  const input = el('input', {
    type: 'search', class: 'search-input', placeholder: 'Search messages', autocomplete: 'off',
    'aria-label': 'Search messages', dataset: { testid: 'search-input' },
  });
  const status = el('div', { class: 'search-status', dataset: { testid: 'search-status' } });
  const list = el('ul', { class: 'search-results', dataset: { testid: 'search-results' } });
  root.append(el('form', { class: 'search', role: 'search', onsubmit: (e) => e.preventDefault() }, input), status, list);

  let timer = 0;
  let gen = 0;
  const run = async () => {
    const q = input.value.trim();
    const mine = ++gen;
    if (!/[\p{L}\p{N}]/u.test(q)) {
      list.replaceChildren();
      status.textContent = '';
      return;
    }
    status.textContent = 'Searching…';
    try {
      const res = await search(base, q, { token: token || undefined, limit: 20 });
      if (mine !== gen) return;
      list.replaceChildren(...res.items.map(hitItem));
      status.textContent = res.items.length ? '' : 'No message matches.';
    } catch (err) {
      if (mine === gen) status.textContent = `Search failed: ${err?.message ?? err}`;
    }
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      clearTimeout(timer);
      run();
    }
  });

  function hitItem(hit) {
    const a = el(
      'a',
      { href: `#${encodeURIComponent(hit.session_id)}`, dataset: { testid: 'search-hit', sessionId: hit.session_id, sequence: hit.sequence } },
      el('span', { class: 'search-title', text: hit.title || hit.session_id }),
      el('span', { class: 'search-snippet' }, ...snippetNodes(hit.snippet)),
    );
    a.addEventListener('click', (e) => {
      e.preventDefault();
      reveal(hit);
    });
    return el('li', {}, a);
  }

  // Opens the hit's session, loads older pages until the view holds the
  // message, then scrolls it into the middle and highlights it.
  async function reveal(hit) {
    open(hit.session_id);
    const deadline = Date.now() + REVEAL_TIMEOUT_MS;
    let session = current();
    while (session?.sessionId !== hit.session_id) {
      if (Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 30));
      session = current();
    }
    try {
      await session.reveal(hit.sequence, { timeoutMs: REVEAL_TIMEOUT_MS });
    } catch (err) {
      status.textContent = `Could not open the message: ${err?.message ?? err}`;
      return;
    }
    const sel = `[data-testid="message"][data-message-id="${CSS.escape(hit.message_id)}"]`;
    let node = document.querySelector(sel);
    while (!node && Date.now() < deadline && current() === session) {
      await new Promise((r) => requestAnimationFrame(r));
      node = document.querySelector(sel);
    }
    if (!node) return;
    for (const old of document.querySelectorAll('.search-hit')) old.classList.remove('search-hit');
    // The page follows the newest message while its scroller is at the
    // bottom: the scroll event tells it at once that it no longer is, and
    // the next few frames keep the hit in view while pages still render.
    const scroller = document.getElementById('scroller');
    const keep = () => {
      const m = node.getBoundingClientRect();
      const box = scroller?.getBoundingClientRect();
      if (!box || m.bottom <= box.top || m.top >= box.bottom) {
        node.scrollIntoView({ block: 'center' });
        scroller?.dispatchEvent(new Event('scroll'));
      }
    };
    node.scrollIntoView({ block: 'center' });
    scroller?.dispatchEvent(new Event('scroll'));
    for (let i = 0; i < 20 && node.isConnected; i++) {
      await new Promise((r) => requestAnimationFrame(r));
      keep();
    }
    node.classList.add('search-hit');
    node.dataset.searchHit = 'true';
    setTimeout(() => {
      node.classList.remove('search-hit');
      delete node.dataset.searchHit;
    }, 4000);
  }
}
