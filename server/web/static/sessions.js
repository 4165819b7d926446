// The sidebar's session list: GET /v1/sessions (most recently active first),
// POST to create, PATCH to rename, DELETE to delete. The open session lives
// in the URL hash (#<session_id>), so a reload or a shared link reopens it.

import { el, setText, shortId, timeOf } from './util.js';
import { icon } from './icons.js';

export class Sessions {
  /**
   * @param {{base: string, token: string, list: HTMLElement, toast: Function,
   *   onRename: (id: string) => void, onDelete: (id: string) => void}} opts
   */
  constructor({ base, token, list, toast, onRename, onDelete }) {
    this.base = base.replace(/\/+$/, '');
    this.token = token;
    this.list = list;
    this.toast = toast;
    this.onRename = onRename;
    this.onDelete = onDelete;
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
    if (!res.ok) {
      const err = new Error(json?.message ? `${json.code}: ${json.message}` : `HTTP ${res.status}`);
      err.code = json?.code;
      err.status = res.status;
      throw err;
    }
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

  /** show replaces the list with the live one (watchSessions) and draws it. */
  show(items) {
    this.items = items;
    this.render();
  }

  /** get returns the listed record of a session, if any. */
  get(id) {
    return this.items.find((s) => s.session_id === id);
  }

  /**
   * load returns the session's record, re-reading the list when it is not
   * in it yet; null when the server does not know the session (a mistyped
   * or stale link would otherwise make the page retry a 404 forever).
   */
  async load(id) {
    if (!this.get(id)) await this.refresh();
    const found = this.get(id);
    if (found) return found;
    // Not among the listed (most recent) sessions: ask the session itself.
    const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    try {
      const res = await fetch(`${this.base}/v1/sessions/${encodeURIComponent(id)}/messages?limit=1`, { headers });
      return res.status === 404 ? null : { session_id: id };
    } catch {
      return { session_id: id }; // the sync core reports the network itself
    }
  }

  /** create makes a new session on the server and returns its id. */
  async create() {
    const created = await this.#request('POST', '/v1/sessions', {});
    if (!created?.session_id) throw new Error('the server returned no session_id');
    this.items = [created, ...this.items.filter((s) => s.session_id !== created.session_id)];
    this.render();
    return created.session_id;
  }

  /** rename sets a session's title (PATCH) and returns the updated record. */
  async rename(id, title) {
    const updated = await this.#request('PATCH', `/v1/sessions/${encodeURIComponent(id)}`, { title });
    this.#replace(id, updated);
    return updated;
  }

  /** remove deletes a session (DELETE); its subscribers are told by the server. */
  async remove(id) {
    await this.#request('DELETE', `/v1/sessions/${encodeURIComponent(id)}`);
    this.forget(id);
  }

  /** forget drops a session from the list (deleted, here or elsewhere). */
  forget(id) {
    this.items = this.items.filter((s) => s.session_id !== id);
    this.render();
  }

  /** update merges fields into a listed record (a setting changed). */
  update(id, fields) {
    const cur = this.get(id);
    if (cur) this.#replace(id, { ...cur, ...fields });
  }

  #replace(id, record) {
    this.items = this.items.map((s) => (s.session_id === id ? { ...s, ...record } : s));
    this.render();
  }

  setActive(id) {
    this.active = id;
    if (this.items.length > 0) this.render();
  }

  /**
   * render lists conversations, not every fork: one entry per root (the
   * open session if it is of that conversation, else its most recently
   * active one; the list comes newest first).
   */
  render() {
    if (this.items.length === 0) {
      this.list.replaceChildren(el('li', { class: 'muted empty-list', text: 'No sessions yet.' }));
      return;
    }
    const rootOf = (s) => s.root_session_id || s.session_id;
    const activeRoot = rootOf(this.get(this.active) ?? { session_id: this.active });
    const shown = new Map(); // root -> the record shown
    for (const s of this.items) {
      const root = rootOf(s);
      if (!shown.has(root) || s.session_id === this.active) shown.set(root, s);
    }
    this.list.replaceChildren(...[...shown.values()].map((s) => this.#item(s, rootOf(s) === activeRoot)));
  }

  #item(s, active) {
    const id = String(s.session_id);
    const name = el('span', { class: 'session-name', dataset: { testid: 'session-title' } });
    setText(name, titleOf(s));
    const link = el(
      'a',
      { href: `#${encodeURIComponent(id)}`, title: id },
      name,
      el('span', { class: 'session-meta', text: timeOf(s.updated_at || s.created_at) }),
    );
    const tools = el('span', { class: 'session-tools' },
      el('button', { type: 'button', class: 'icon-btn small', 'aria-label': 'Rename', title: 'Rename', dataset: { testid: 'session-rename' }, onclick: () => this.onRename(id) }, icon('pencil')),
      el('button', { type: 'button', class: 'icon-btn small', 'aria-label': 'Delete', title: 'Delete', dataset: { testid: 'session-delete' }, onclick: () => this.onDelete(id) }, icon('trash')),
    );
    return el('li', { class: active ? 'active' : null, dataset: { sessionId: id, root: s.root_session_id || id, testid: 'session-item' } }, link, tools);
  }
}

/** titleOf is what a session is called: its title, or its id's tail. */
export function titleOf(s) {
  return s?.title || (s?.head_sequence ? `Session ${shortId(s.session_id)}` : 'New session');
}
