// The demo page: wires the agentsync JavaScript host (served by the
// reference server at /js/) to the DOM. All sync logic lives in the host and
// its WebAssembly core; this file only renders session.view and turns clicks
// into REST calls (send, answer, action).
//
// Tests drive it through data-testid attributes and window.__agentsync.

import { connect, watchSessions } from '/js/index.js';
import { MessageList, isNoteOnly } from './messages.js';
import { Sessions, titleOf } from './sessions.js';
import { el, setText, toggle, plural } from './util.js';
import { icon } from './icons.js';
import { sliceStats } from './markdown.js';
import { Attachments } from './attachments.js';
import { mountSearch } from './search.js';
import { mountPresence } from './presence.js';

const SCENARIOS = [
  ['help', 'scenario:help'],
  ['markdown', 'scenario:markdown'],
  ['text', 'scenario:text'],
  ['reasoning', 'scenario:reasoning'],
  ['tools', 'scenario:tools'],
  ['approval', 'scenario:approval'],
  ['question', 'scenario:question'],
  ['error', 'scenario:error'],
  ['data', 'scenario:data'],
  ['file', 'scenario:file'],
  ['long stream', 'scenario:long chars=100000 delta=50'],
];

const STATUS_LABELS = {
  idle: 'idle',
  connecting: 'connecting',
  syncing: 'syncing',
  live: 'live',
  backoff: 'reconnecting',
  closed: 'closed',
};

const $ = (id) => document.getElementById(id);
const ui = {
  app: document.querySelector('.app'),
  list: $('message-list'),
  scroller: $('scroller'),
  empty: $('empty'),
  older: $('older'),
  olderBtn: $('load-older'),
  olderLabel: $('older-label'),
  title: $('session-title'),
  sub: $('session-sub'),
  status: $('status'),
  drop: $('drop'),
  banner: $('banner'),
  input: $('input'),
  send: $('send'),
  stop: $('stop'),
  delivery: $('delivery'),
  composer: $('composer'),
  chips: $('scenarios'),
  toasts: $('toasts'),
  approvalMode: $('approval-mode'),
  modelForm: $('model-form'),
  model: $('model'),
  settings: $('settings'),
  jump: $('jump-latest'),
  debug: $('debug'),
  confirm: $('confirm'),
  attach: $('attach'),
  fileInput: $('file-input'),
  tray: $('attachments'),
  dropZone: $('drop-zone'),
};

const params = new URLSearchParams(location.search);
const token = params.get('token') ?? '';
const base = location.origin;

// ---------------------------------------------------------------- toasts

// At most MAX_TOASTS show at once (the oldest goes first), so a burst can
// never grow down to the composer.
const MAX_TOASTS = 4;

function toast(text, kind = 'info') {
  while (ui.toasts.childElementCount >= MAX_TOASTS) ui.toasts.firstElementChild.remove();
  const node = el('div', { class: `toast ${kind}`, role: 'status', text });
  ui.toasts.append(node);
  setTimeout(() => node.classList.add('leaving'), 4200);
  setTimeout(() => node.remove(), 4600);
}

// ---------------------------------------------------------------- state

const presence = mountPresence({ avatars: $('presence'), typing: $('typing'), input: ui.input });
let current = null; // {id, session, offs: [], view}
let openGen = 0;
// follow: the view sticks to the newest text. Only the reader's scrolling
// changes it (a scroll event away from the bottom), never the text growing:
// streamed text reaches the DOM (change events) before the view is
// rendered, so "near the bottom" measured at render time would drop a
// reader who never scrolled.
let follow = true;
let autoScrollTop = -1; // where the page itself last scrolled to
let olderInFlight = false;

const messages = new MessageList(ui.list, {
  answer: (interactionId, response) => requireSession().answer(interactionId, response),
  toast,
  // Retry is offered only when the server lists it among the session's
  // actions (a server without it has no "actions" list, or one without it).
  canRetry: () => supportsAction('retry'),
  retry: () => {
    follow = true;
    return requireSession().action('retry');
  },
  // Regenerate keeps the reply: a fork before it runs its turn again, and
  // the page moves to the fork (the URL follows the branch); ‹ 1 / 2 › on
  // the reply switches back.
  regenerate: async (reply) => {
    const fork = await requireSession().regenerate(reply.sequence);
    follow = true;
    goToBranch(fork.session_id);
  },
  // An edit is a fork before the user message with the new words.
  edit: async (msg, text) => {
    const fork = await requireSession().edit(msg.sequence, text);
    follow = true;
    goToBranch(fork.session_id);
  },
  // A signed URL for an <img> or a download link (docs/files.md).
  signFile: async (url) => {
    const res = await fetch(`${base}${url}/sign?ttl=3600`, { method: 'POST', headers: token ? { Authorization: `Bearer ${token}` } : {} });
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    const out = await res.json();
    return { url: `${base}${out.url}`, expires_at: out.expires_at };
  },
  // The arrows: the alternative at index of the message's position.
  switchBranch: async (sequence, index) => {
    const list = await requireSession().branches(sequence);
    const to = list.items[index];
    if (to && to.session_id !== current?.id) goToBranch(to.session_id);
  },
});

// goToBranch opens another session of the conversation: switching branch is
// switching sessions (one page and a subscription), and the URL follows.
function goToBranch(id) {
  sessions.refresh();
  location.hash = encodeURIComponent(id);
}

// The alternatives of the path, read again when the path grows (a new
// message may be a fork point) or another session opens.
let altsKey = '';
function refreshAlternatives(view) {
  if (!current || view.status !== 'live') return;
  const key = `${current.id}:${view.total}`;
  if (key === altsKey) return;
  altsKey = key;
  const session = current.session;
  session.alternatives().then(
    (items) => {
      if (current?.session !== session) return;
      const alts = {};
      for (const a of items) alts[a.sequence] = { count: a.count, index: a.index };
      messages.setAlternatives(alts);
    },
    () => { altsKey = ''; },
  );
}

const attachments = new Attachments({ tray: ui.tray, base, token, toast, sessionId: () => current?.id ?? null });

const sessions = new Sessions({ base, token, list: $('session-list'), toast, onRename: renameSession, onDelete: deleteSession });

function supportsAction(type) {
  const actions = current && sessions.get(current.id)?.actions;
  return Array.isArray(actions) && actions.includes(type);
}

function requireSession() {
  if (!current) throw new Error('no session is open');
  return current.session;
}

// ---------------------------------------------------------------- opening a session

async function open(id) {
  if (current?.id === id) return;
  const gen = ++openGen;
  closeCurrent();
  ui.banner.hidden = true;
  sessions.setActive(id);
  messages.clear();
  attachments.clear();
  ui.older.hidden = true;
  showTitle(id);
  setText(ui.sub, '');
  setComposerEnabled(false);
  renderComposer(null); // no Stop, no "Steer" placeholder left from the previous session
  ui.jump.hidden = true;
  $('include-internal').checked = false; // each session opens without them
  renderEmpty(true);
  if (!id) {
    setStatus('idle');
    return;
  }

  setStatus('connecting');
  const record = await sessions.load(id);
  if (gen !== openGen) return;
  if (record === null) {
    setStatus('closed');
    showBanner('bad', `There is no session ${id} on this server. Start a new one.`);
    $('start').hidden = false;
    return;
  }
  showTitle(id);
  showSettings(record);
  let session;
  try {
    // wait:false: render at once and show the status as it goes;
    // schedule:'frame': at most one view notification per animation frame.
    session = await connect({ url: base, sessionId: id, token: token || undefined, wait: false, schedule: 'frame' });
  } catch (err) {
    if (gen === openGen) {
      setStatus('closed');
      toast(`Could not open session: ${err?.message ?? err}`, 'bad');
    }
    return;
  }
  if (gen !== openGen) {
    session.close(); // the user moved on while the module loaded
    return;
  }
  current = { id, session, offs: [], view: null };
  presence.follow(session);
  window.__agentsync = { session, sessionId: id, stats, toast, list: messages.stats, slices: sliceStats };
  follow = true;
  current.offs.push(
    session.on('status', (e) => onStatus(typeof e === 'string' ? e : e?.status, e?.reason)),
    session.on('error', (err) => onSessionError(id, err)),
    // The host throws away a core that trapped and re-reads the snapshot
    // with a fresh one: say so, the view stays whole meanwhile.
    session.on('rebuild', () => showBanner('warn', 'The sync core restarted after an internal error and is re-reading the snapshot…')),
    // What changed, just before the view it leads to: streamed text is
    // appended where it belongs, and render() skips the message.
    session.on('change', (c) => current?.session === session && messages.applyChange(c)),
    session.subscribe(onView),
  );
  onStatus(session.status);
  setComposerEnabled(true);
  warmWhenIdle(session);
  if (pendingRename === id) {
    pendingRename = null;
    renameSession(id);
  } else {
    ui.input.focus({ preventScroll: true });
  }
}

// The sync core warms up for a long answer while the page is idle
// (Session.warm), one slice per idle callback: a page's first long answer
// otherwise paid for the module's first-tier code, its memory's growth and
// its collector's first cycles in its own tasks (js/bench/warm.bench.js:
// the longest message of a fresh module's first 1 MB answer, 13 ms cold
// and 2.5 ms warmed, in Node). The
// instance is kept for the next session, warm. <html data-core-warm="done">
// says when (the page bench waits for it, as for the markdown warm-up).
function warmWhenIdle(session) {
  const idle = () => new Promise((resolve) => (globalThis.requestIdleCallback ?? setTimeout)(() => resolve()));
  idle()
    .then(() => session.warm({ pause: idle }))
    .then(
      () => (document.documentElement.dataset.coreWarm = 'done'),
      (err) => console.warn('agentsync: warm-up failed', err),
    );
}

function closeCurrent() {
  if (!current) return;
  for (const off of current.offs) off();
  presence.follow(null);
  current.session.close();
  current = null;
  window.__agentsync = { session: null, stats, toast };
}

// ---------------------------------------------------------------- rendering the view

// Render statistics, read by tests and handy in the console.
const stats = { renders: 0, renderMs: 0, maxRenderMs: 0 };

function onView(view) {
  if (!current) return;
  const t0 = performance.now();
  renderView(view);
  const ms = performance.now() - t0;
  stats.renders++;
  stats.renderMs += ms;
  stats.maxRenderMs = Math.max(stats.maxRenderMs, ms);
}

function scrollToBottom() {
  const sc = ui.scroller;
  sc.scrollTop = sc.scrollHeight;
  autoScrollTop = sc.scrollTop;
}

function renderView(view) {
  current.view = view;
  const sc = ui.scroller;
  const keepBottom = follow;
  // Keep what the reader looks at in place when older messages are
  // prepended above it (native scroll anchoring does not run at offset 0).
  const anchor = keepBottom ? null : firstVisibleMessage();
  const anchorTop = anchor?.getBoundingClientRect().top ?? 0;

  messages.render(view.messages);

  // A reader who follows is kept at the bottom by the ResizeObserver below,
  // after the frame's own layout: scrolling here would force a layout of
  // its own in every render.
  if (!keepBottom && anchor?.isConnected) sc.scrollTop += anchor.getBoundingClientRect().top - anchorTop;
  // Scrolled up while the agent writes: offer a way back to the newest text.
  ui.jump.hidden = keepBottom || !isRunning(view);

  renderEmpty(view.messages.length === 0 && !view.has_more_older);
  syncRecord(view);
  renderOlder(view);
  renderComposer(view);
  renderSubtitle(view);
  refreshAlternatives(view);
  // Nothing to scroll yet but older history exists: fetch it now.
  if (view.has_more_older && sc.scrollHeight <= sc.clientHeight + 80) loadOlder();
}

// syncRecord re-reads the session's record when the view says it changed
// elsewhere (another tab, a script): a first user message gives it a title,
// a settings action changes its mode or model.
let recordKey = '';
function syncRecord(view) {
  const id = current.id;
  const titled = Boolean(sessions.get(id)?.title);
  let settings = '';
  for (let i = view.messages.length - 1; i >= 0 && i >= view.messages.length - 4; i--) {
    const action = view.messages[i].parts?.findLast?.((p) => p.type === 'action' && p.action_type?.startsWith('set_'));
    if (action) {
      settings = action.action_id;
      break;
    }
  }
  const key = `${id}:${titled || view.messages.some((m) => m.role === 'user')}:${settings}`;
  if (key === recordKey) return;
  recordKey = key;
  sessions.refresh().then(() => {
    if (current?.id !== id) return;
    showTitle(id);
    showSettings(sessions.get(id));
  });
}

function firstVisibleMessage() {
  const top = ui.scroller.getBoundingClientRect().top;
  for (const node of ui.list.children) {
    if (node.getBoundingClientRect().bottom > top) return node;
  }
  return null;
}

// The empty state invites to start a session when none is open (on a phone
// the sidebar's button is hidden), and to pick a scenario in a new one.
function renderEmpty(show) {
  ui.empty.hidden = !show;
  const none = !current && location.hash.length <= 1;
  $('start').hidden = !none;
  setText($('empty-title'), none ? 'Start a session with the scripted agent' : 'Talk to the scripted agent');
}

function renderOlder(view) {
  const any = view.messages.length > 0;
  ui.older.hidden = !any;
  ui.olderBtn.hidden = !view.has_more_older || view.loading_older;
  setText(ui.olderLabel, view.loading_older ? 'Loading older messages…' : view.has_more_older ? '' : 'Beginning of the session');
}

function isRunning(view) {
  return view.messages.some((m) => m.role === 'agent' && m.state === 'streaming');
}

function renderComposer(view) {
  const running = view ? isRunning(view) : false;
  if (ui.stop.hidden === running) ui.stop.hidden = !running;
  if (ui.delivery.hidden === running) ui.delivery.hidden = !running;
  const flag = running ? 'true' : 'false';
  if (ui.composer.dataset.running !== flag) {
    // Attribute writes invalidate style even when the value is the same:
    // during a stream this runs every frame, so only write on change.
    ui.composer.dataset.running = flag;
    ui.input.placeholder = running ? 'Steer the turn…' : 'Message the agent…';
  }
}

let digestTimer = null;

// The subtitle counts messages and, once the view settles with debug data
// on, shows its digest:
// the same hash on every host that holds the same view (compare it with the
// Go bindings or another tab). It hashes the whole view, so it is computed
// only when nothing streams, and never shown stale.
function renderSubtitle(view) {
  // Notes (settings changes) are not messages of the conversation.
  const notes = view.messages.filter(isNoteOnly).length;
  const shown = view.messages.length - notes;
  // total counts every message the session created, internal ones (a
  // retry's recovery prompt) included: "N of total" only while older
  // history is still to load.
  const total = (view.total ?? view.messages.length) - notes;
  const count = view.has_more_older ? `${shown} of ${plural(total, 'message')}` : plural(shown, 'message');
  setText(ui.sub, count);
  ui.sub.title = '';
  clearTimeout(digestTimer);
  // Only with debug data on: hashing a view that holds a 1 MB answer holds
  // the main thread for hundreds of milliseconds.
  if (!ui.debug.checked || isRunning(view) || current?.session.status !== 'live') return;
  const session = current.session;
  digestTimer = setTimeout(() => {
    if (current?.session !== session || current.view !== view) return;
    try {
      const d = session.digest();
      ui.sub.title = `View digest (equal on every host): ${d}`;
      ui.sub.replaceChildren(count, el('span', { class: 'debug-only', dataset: { testid: 'digest' }, text: ` · digest ${d.slice(0, 10)}` }));
    } catch {
      // closed or rebuilding: the next settled view shows it
    }
  }, 300);
}

// ---------------------------------------------------------------- connection status and healing

let droppedAt = 0;
let bannerTimer = null;

function setStatus(status) {
  ui.status.dataset.status = status;
  setText(ui.status.querySelector('.label'), STATUS_LABELS[status] ?? status);
  ui.drop.disabled = status !== 'live';
  toggle(ui.scroller, 'stale', status === 'backoff' || status === 'connecting' || status === 'syncing');
}

function onStatus(status, reason) {
  if (!status) return;
  setStatus(status);
  if (status === 'backoff' && !droppedAt) {
    showBanner('warn', `Connection lost${reason ? ` (${reason})` : ''}. Reconnecting…`);
  } else if (status === 'live' && (droppedAt || !ui.banner.hidden)) {
    const took = droppedAt ? ` in ${Math.round(performance.now() - droppedAt)} ms` : '';
    droppedAt = 0;
    showBanner('ok', `Reconnected${took}: the view was re-read from the server's snapshot and healed.`, 4000);
  }
}

function showBanner(kind, text, hideAfter = 0) {
  clearTimeout(bannerTimer);
  ui.banner.className = `banner ${kind}`;
  ui.banner.dataset.kind = kind;
  setText(ui.banner, text);
  ui.banner.hidden = false;
  if (hideAfter) bannerTimer = setTimeout(() => (ui.banner.hidden = true), hideAfter);
}

ui.drop.addEventListener('click', () => {
  if (!current) return;
  droppedAt = performance.now();
  if (current.session.dropConnection()) showBanner('warn', 'Connection dropped. The core backs off, re-subscribes and re-reads the snapshot…');
  else droppedAt = 0;
});

// ---------------------------------------------------------------- older history

function loadOlder() {
  const view = current?.view;
  if (!view || !view.has_more_older || view.loading_older || olderInFlight) return;
  olderInFlight = true;
  current.session
    .loadOlder()
    .catch((err) => toast(`Could not load older messages: ${err?.message ?? err}`, 'bad'))
    .finally(() => {
      olderInFlight = false;
    });
}

ui.scroller.addEventListener('scroll', () => {
  const sc = ui.scroller;
  if (sc.scrollTop < 160) loadOlder();
  // Our own scroll to the bottom keeps following even if text grew since.
  follow = sc.scrollTop >= autoScrollTop - 1 || sc.scrollHeight - sc.scrollTop - sc.clientHeight < 64;
  if (follow) ui.jump.hidden = true;
}, { passive: true });

// A reader who follows stays at the bottom whatever changes the list's
// size or the scroller's: a render, streamed text appended, a long text
// rendered in slices (markdown.js), a text chunk laid out at its real size
// once it nears the screen (content-visibility: its placeholder height
// until then), a taller composer. Called after layout, before paint.
const stickToBottom = new ResizeObserver(() => {
  if (follow) scrollToBottom();
});
stickToBottom.observe(ui.list);
stickToBottom.observe(ui.scroller);

ui.jump.append(icon('down'), el('span', { text: 'Jump to latest' }));
ui.jump.addEventListener('click', () => {
  follow = true;
  ui.scroller.scrollTo({ top: ui.scroller.scrollHeight });
  ui.jump.hidden = true;
});
ui.olderBtn.addEventListener('click', loadOlder);

// ---------------------------------------------------------------- composer

function setComposerEnabled(on) {
  ui.input.disabled = !on;
  ui.send.disabled = !on;
  ui.attach.disabled = !on;
  for (const chip of ui.chips.children) chip.disabled = !on;
}

async function send(text) {
  const value = text.trim();
  if ((!value && !attachments.count) || !current) return;
  follow = true;
  const session = current.session;
  const withFiles = attachments.count > 0;
  try {
    // Attached files go with the message: every upload finishes first,
    // then one message holds the text and a file part per file.
    let parts = value;
    if (withFiles) {
      ui.send.disabled = true;
      const files = await attachments.fileParts().finally(() => { ui.send.disabled = ui.input.disabled; });
      if (current?.session !== session) return;
      parts = [...(value ? [{ type: 'text', text: value }] : []), ...files];
    }
    // While a turn runs the message is sent as the composer's delivery
    // says: steer it, queue it as the next turn, or interrupt it.
    await session.send(parts, ui.delivery.hidden ? {} : { delivery: ui.delivery.value });
    if (withFiles) attachments.sent();
    sessions.refresh(); // the session moves up the list
  } catch (err) {
    toast(`Could not send: ${err?.message ?? err}`, 'bad');
    if (!ui.input.value) ui.input.value = value; // give the words back
  }
}

ui.composer.addEventListener('submit', (e) => {
  e.preventDefault();
  const text = ui.input.value;
  ui.input.value = '';
  autosize();
  send(text);
});

// Enter sends, Shift+Enter is a new line, Escape stops a running turn.
ui.input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    ui.composer.requestSubmit();
  }
});
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || e.isComposing || ui.stop.hidden || ui.confirm.open) return;
  if (ui.settings.open) return; // Escape closes the menu first
  e.preventDefault();
  stop();
});

// Files: the paperclip, a drop anywhere on the page, or a paste.
ui.attach.append(icon('clip'));
ui.attach.addEventListener('click', () => ui.fileInput.click());
ui.fileInput.addEventListener('change', () => {
  attachments.add([...ui.fileInput.files]);
  ui.fileInput.value = '';
  ui.input.focus();
});
ui.input.addEventListener('paste', (e) => {
  const files = [...(e.clipboardData?.files ?? [])];
  if (files.length === 0 || !current) return;
  e.preventDefault();
  attachments.add(files);
});
const dragsFiles = (e) => !!current && !ui.input.disabled && [...(e.dataTransfer?.types ?? [])].includes('Files');
let dragDepth = 0;
document.addEventListener('dragenter', (e) => {
  if (!dragsFiles(e)) return;
  dragDepth++;
  ui.dropZone.hidden = false;
});
document.addEventListener('dragleave', (e) => {
  if (!dragsFiles(e)) return;
  dragDepth = Math.max(0, dragDepth - 1);
  if (dragDepth === 0) ui.dropZone.hidden = true;
});
document.addEventListener('dragover', (e) => {
  if (!dragsFiles(e)) return;
  e.preventDefault(); // a drop here attaches, the browser does not open the file
  e.dataTransfer.dropEffect = 'copy';
});
document.addEventListener('drop', (e) => {
  dragDepth = 0;
  ui.dropZone.hidden = true;
  if (!dragsFiles(e)) return;
  e.preventDefault();
  attachments.add([...e.dataTransfer.files]);
});

function autosize() {
  ui.input.style.height = 'auto';
  ui.input.style.height = `${Math.min(ui.input.scrollHeight, 180)}px`;
}
ui.input.addEventListener('input', autosize);

for (const [label, command] of SCENARIOS) {
  ui.chips.append(
    el('button', {
      type: 'button',
      class: 'chip',
      title: `${command}  (shift-click to edit first)`,
      dataset: { testid: 'scenario', scenario: label.split(' ')[0] },
      text: label,
      disabled: true,
      onclick: (e) => {
        if (e.shiftKey) {
          ui.input.value = command;
          autosize();
          ui.input.focus();
        } else {
          send(command);
        }
      },
    }),
  );
}

async function stop() {
  try {
    await requireSession().action('stop');
  } catch (err) {
    toast(`Could not stop: ${err?.message ?? err}`, 'bad');
  }
}
ui.stop.addEventListener('click', stop);

// ---------------------------------------------------------------- settings

// showSettings shows the session's own settings: the menu must never claim
// a mode the session is not in.
function showSettings(record) {
  if (record?.approval_mode) ui.approvalMode.value = record.approval_mode;
  ui.approvalMode.dataset.mode = record?.approval_mode ?? '';
  ui.model.placeholder = record?.model || 'scripted';
}

ui.approvalMode.addEventListener('change', async () => {
  const id = current?.id;
  const mode = ui.approvalMode.value;
  try {
    await requireSession().action('set_approval_mode', mode);
    sessions.update(id, { approval_mode: mode });
    ui.approvalMode.dataset.mode = mode;
  } catch (err) {
    ui.approvalMode.value = ui.approvalMode.dataset.mode || ui.approvalMode.value;
    toast(`Could not change approval mode: ${err?.message ?? err}`, 'bad');
  }
});

// The settings menu closes on any click outside it, as menus do.
document.addEventListener('click', (e) => {
  if (ui.settings.open && !ui.settings.contains(e.target)) ui.settings.open = false;
});

// Internal messages (recovery prompts, audit) are hidden by default; the
// core re-reads the snapshot with them when this is switched.
$('include-internal').addEventListener('change', async (e) => {
  try {
    await requireSession().setIncludeInternal(e.target.checked);
  } catch (err) {
    toast(`Could not switch internal messages: ${err?.message ?? err}`, 'bad');
  }
});

ui.modelForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const model = ui.model.value.trim();
  if (!model) return;
  try {
    await requireSession().action('set_model', model);
    sessions.update(current?.id, { model });
    showSettings(sessions.get(current?.id));
    ui.model.value = '';
    ui.settings.open = false;
  } catch (err) {
    toast(`Could not set the model: ${err?.message ?? err}`, 'bad');
  }
});

// ---------------------------------------------------------------- title, rename, delete

function showTitle(id) {
  if (ui.title.querySelector('input')) return; // being renamed
  if (!id) {
    setText(ui.title, 'No session');
    ui.title.title = '';
    return;
  }
  const record = sessions.get(id);
  setText(ui.title, titleOf(record ?? { session_id: id }));
  ui.title.title = id;
  document.title = `${ui.title.textContent} · agentsync`;
}

// renameSession edits a title in place: the header's title becomes a text
// box; Enter or leaving it saves, Escape cancels.
let pendingRename = null; // a rename asked for a session that is opening

async function renameSession(id) {
  if (current?.id !== id) {
    // Open it first: open() starts the rename once its title is shown.
    pendingRename = id;
    location.hash = encodeURIComponent(id);
    return;
  }
  const record = sessions.get(id);
  const input = el('input', { class: 'title-input', value: record?.title ?? '', 'aria-label': 'Session title', dataset: { testid: 'title-input' }, maxlength: 120 });
  ui.title.replaceChildren(input);
  input.focus();
  input.select();
  let done = false;
  const finish = async (save) => {
    if (done) return;
    done = true;
    const title = input.value.trim();
    if (save && title && title !== record?.title) {
      try {
        await sessions.rename(id, title);
      } catch (err) {
        toast(`Could not rename: ${err?.message ?? err}`, 'bad');
      }
    }
    ui.title.replaceChildren();
    if (current?.id === id) showTitle(id);
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') finish(true);
    else if (e.key === 'Escape') {
      e.stopPropagation();
      finish(false);
    }
  });
  input.addEventListener('blur', () => finish(true));
}
ui.title.addEventListener('dblclick', () => current && renameSession(current.id));

async function deleteSession(id) {
  const name = titleOf(sessions.get(id) ?? { session_id: id });
  setText($('confirm-text'), `Delete "${name}"? Its messages are removed from the server for every viewer.`);
  ui.confirm.showModal();
  const ok = await new Promise((resolve) => ui.confirm.addEventListener('close', () => resolve(ui.confirm.returnValue === 'delete'), { once: true }));
  if (!ok) return;
  try {
    if (current?.id === id) closeCurrent();
    await sessions.remove(id);
    if (decodeURIComponent(location.hash.slice(1)) === id) location.hash = '';
    toast(`Deleted "${name}"`);
  } catch (err) {
    toast(`Could not delete: ${err?.message ?? err}`, 'bad');
  }
}

// The server ends a deleted session's subscriptions with an error frame
// {code: not_found, reason: "session deleted"} (docs/protocol.md §4.4):
// stop reconnecting and say what happened.
function onSessionError(id, err) {
  if (err?.code === 'not_found' && current?.id === id) {
    closeCurrent();
    sessions.forget(id);
    setStatus('closed');
    renderComposer(null);
    setComposerEnabled(false);
    showBanner('bad', 'This session was deleted.');
    return;
  }
  console.warn('agentsync:', err);
}

// Debug data (sequence, revision, digest) is for developers: hidden unless
// switched on; the choice is remembered.
ui.debug.checked = localStorage.getItem('agentsync.debug') === '1';
toggle(ui.app, 'debug', ui.debug.checked);
ui.debug.addEventListener('change', () => {
  localStorage.setItem('agentsync.debug', ui.debug.checked ? '1' : '0');
  toggle(ui.app, 'debug', ui.debug.checked);
  if (current?.view) renderSubtitle(current.view); // the digest, now asked for
});

// ---------------------------------------------------------------- sidebar and routing

$('toggle-sidebar').append(icon('menu'));
ui.settings.querySelector('summary').append(icon('settings'));

function setSidebar(open) {
  toggle(ui.app, 'sidebar-open', open);
  $('scrim').hidden = !open;
}
$('toggle-sidebar').addEventListener('click', () => setSidebar(!ui.app.classList.contains('sidebar-open')));
$('scrim').addEventListener('click', () => setSidebar(false));

async function newSession(e) {
  const btn = e.currentTarget;
  btn.disabled = true;
  try {
    const id = await sessions.create();
    location.hash = encodeURIComponent(id);
  } catch (err) {
    toast(`Could not create a session: ${err?.message ?? err}`, 'bad');
  } finally {
    btn.disabled = false;
  }
}
$('new-session').addEventListener('click', newSession);
$('start').addEventListener('click', newSession);

function route() {
  const id = decodeURIComponent(location.hash.replace(/^#/, ''));
  setSidebar(false);
  open(id);
}

mountSearch({ root: $('search'), base, token, open: (id) => { location.hash = encodeURIComponent(id); }, current: () => current?.session ?? null });
window.addEventListener('hashchange', route);
// The list, live: a session made in another tab, by the Go host or on
// another node shows at once (protocol §4.7); a focus still re-reads it.
watchSessions(base, { token: token || undefined }, (list) => sessions.show(list));
window.addEventListener('focus', () => sessions.refresh());
window.__agentsync = { session: null, stats, toast };
sessions.refresh();
route();
