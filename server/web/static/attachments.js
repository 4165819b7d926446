// Attachments in the composer (docs/files.md): files picked with the
// paperclip, dropped on the page or pasted start uploading at once, each
// with a thumbnail (images) and a progress bar, through the JS package's
// resumable uploads (`@agentsync/client/uploads`, tus-js-client, loaded
// the first time a file is attached). Sending waits for every upload and
// posts one message: the text, then a `file` part per file.

import { el, setText } from './util.js';
import { icon } from './icons.js';

let uploads = null; // the uploads module, once loaded
const loadUploads = () => (uploads ??= import('/js/uploads.js'));

export class Attachments {
  /**
   * @param {{tray: HTMLElement, base: string, token: string, sessionId: () => string | null, toast: Function, onChange?: Function}} opts
   */
  constructor(opts) {
    this.opts = opts;
    this.items = [];
    this.seq = 0;
  }

  get count() {
    return this.items.length;
  }

  /** add starts uploading files (a FileList or an array of File). */
  add(files) {
    const sessionId = this.opts.sessionId();
    if (!sessionId) return;
    for (const file of files) this.#start(file, sessionId);
    this.#changed();
  }

  #start(file, sessionId) {
    const item = { id: ++this.seq, file, sessionId, status: 'uploading', sent: 0, result: null, handle: null };
    const image = file.type.startsWith('image/');
    item.thumb = image ? URL.createObjectURL(file) : null;
    item.bar = el('div', { class: 'attachment-bar' });
    item.label = el('span', { class: 'attachment-progress muted', dataset: { testid: 'attachment-progress' }, text: '0%' });
    const remove = el('button', { type: 'button', class: 'attachment-remove', title: 'Remove', 'aria-label': `Remove ${file.name}`, dataset: { testid: 'attachment-remove' } }, icon('x'));
    remove.addEventListener('click', () => this.remove(item));
    item.el = el('div', { class: 'attachment', dataset: { testid: 'attachment', status: 'uploading', progress: '0', name: file.name } },
      item.thumb ? el('img', { class: 'attachment-thumb', src: item.thumb, alt: '', dataset: { testid: 'attachment-thumb' } }) : el('span', { class: 'attachment-thumb icon-thumb' }, icon('file')),
      el('div', { class: 'attachment-body' },
        el('span', { class: 'attachment-name', text: file.name, title: file.name }),
        el('div', { class: 'attachment-track' }, item.bar),
        item.label),
      remove);
    this.opts.tray.append(item.el);
    this.items.push(item);
    item.done = loadUploads()
      .then(({ uploadFile }) => {
        if (item.status === 'removed') throw new Error('removed');
        item.handle = uploadFile(file, {
          baseURL: this.opts.base,
          token: this.opts.token || undefined,
          sessionId,
          // The composer does not outlive a reload: no upload to resume
          // from another page (and none into another session).
          resume: false,
          onProgress: (sent, total) => this.#progress(item, sent, total),
        });
        return item.handle.done;
      })
      .then((result) => {
        item.result = result;
        this.#progress(item, file.size, file.size);
        this.#status(item, 'done');
        return result;
      }, (err) => {
        if (item.status !== 'removed') {
          this.#status(item, 'error');
          setText(item.label, 'failed');
          item.label.title = String(err?.message ?? err);
          this.opts.toast(`Could not upload ${file.name}: ${err?.message ?? err}`, 'bad');
        }
        throw err;
      });
    item.done.catch(() => {}); // reported above; send() reads it again
  }

  #progress(item, sent, total) {
    const pct = total > 0 ? Math.min(100, Math.floor((sent / total) * 100)) : 100;
    item.sent = sent;
    item.bar.style.width = `${pct}%`;
    item.el.dataset.progress = String(pct);
    setText(item.label, `${pct}%`);
  }

  #status(item, status) {
    item.status = status;
    item.el.dataset.status = status;
    this.#changed();
  }

  /** remove drops an attachment, cancelling its upload. */
  remove(item) {
    item.status = 'removed';
    item.handle?.cancel().catch(() => {});
    item.el.remove();
    if (item.thumb) URL.revokeObjectURL(item.thumb);
    this.items = this.items.filter((i) => i !== item);
    this.#changed();
  }

  /** clear drops every attachment (another session opened). */
  clear() {
    for (const item of [...this.items]) this.remove(item);
  }

  /**
   * fileParts waits for every upload and answers their file parts; it
   * rejects if one failed (nothing is sent then).
   */
  async fileParts() {
    const results = await Promise.all(this.items.map((i) => i.done));
    return results.map((u) => ({ type: 'file', url: u.url, media_type: u.mediaType, filename: u.filename }));
  }

  /** sent empties the tray once the message holding the files is posted. */
  sent() {
    for (const item of this.items) {
      item.el.remove();
      if (item.thumb) URL.revokeObjectURL(item.thumb);
    }
    this.items = [];
    this.#changed();
  }

  #changed() {
    this.opts.tray.hidden = this.items.length === 0;
    this.opts.onChange?.();
  }
}
