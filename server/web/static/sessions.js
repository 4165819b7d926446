// The sidebar's session list: GET /v1/sessions (newest first) and
// POST /v1/sessions. The open session lives in the URL hash (#<session_id>),
// so a reload or a shared link reopens it.

import { el, setText, shortId, timeOf } from './util.js';

export class Sessions {
  /**
   * @param {{base: string, token: string, list: HTMLElement, toast: Function}} opts
   */
  constructor({ base, token, list, toast }) {
    this.base = base.replace(/\/+$/, '');
    this.token = token;
    this.list = list;
    this.toast = toast;
    this.items = [];
    this.active = '';
  }

  async #request(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // a non-JSON body (a proxy's error page): reported below by status
    }
    if (!res.ok) throw new Error(json?.message ? `${json.code}: ${json.message}` : `HTTP ${res.status}`);
    return json;
  }

  /** refresh re-reads the list; errors become a toast, never a broken page. */
  async refresh() {
    try {
      const page = await this.#request('GET', '/v1/sessions');
      this.items = Array.isArray(page?.items) ? page.items : [];
    } catch (err) {
      this.toast(`Could not list sessions: ${err.message}`, 'bad');
    }
    this.render();
  }

  /** create makes a new session on the server and returns its id. */
  async create() {
    const created = await this.#request('POST', '/v1/sessions', {});
    if (!created?.session_id) throw new Error('the server returned no session_id');
    this.items = [created, ...this.items.filter((s) => s.session_id !== created.session_id)];
    this.render();
    return created.session_id;
  }

  /**
   * exists tells whether the server knows the session (a mistyped or stale
   * link would otherwise make the page retry a 404 forever). Any answer but
   * a 404 counts as "exists": the sync core handles the rest.
   */
  async exists(id) {
    const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    try {
      const res = await fetch(`${this.base}/v1/sessions/${encodeURIComponent(id)}/messages?limit=1`, { headers });
      return res.status !== 404;
    } catch {
      return true;
    }
  }

  setActive(id) {
    this.active = id;
    for (const li of this.list.children) li.classList.toggle('active', li.dataset.sessionId === id);
  }

  render() {
    if (this.items.length === 0) {
      this.list.replaceChildren(el('li', { class: 'muted empty-list', text: 'No sessions yet.' }));
      return;
    }
    this.list.replaceChildren(
      ...this.items.map((s) => {
        const id = String(s.session_id);
        const name = el('span', { class: 'session-name mono' });
        setText(name, shortId(id));
        const link = el(
          'a',
          { href: `#${encodeURIComponent(id)}`, title: id },
          name,
          el('span', { class: 'session-meta', text: [s.model, timeOf(s.created_at)].filter(Boolean).join(' · ') }),
        );
        return el('li', { class: id === this.active ? 'active' : null, dataset: { sessionId: id, testid: 'session-item' } }, link);
      }),
    );
  }
}
