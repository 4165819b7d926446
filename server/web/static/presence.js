// presence.js: who else follows the session and who is typing, from the
// session's presence signals (docs/protocol.md §4.6). Avatars sit in the
// top bar; "… is typing" sits above the composer. This tab says it types
// at most every two seconds (the server lets it lapse after six).

import { el, setText } from './util.js';

const SAY_EVERY_MS = 2000;
const LAPSE_MS = 6000;

// The name shown for a principal: the open server's shared principal is
// "you", a share link "guest".
function nameOf(principal) {
  if (principal === '') return 'you';
  if (principal.startsWith('share:')) return 'guest';
  return principal;
}

function initials(name) {
  return name.split(/[\s@._-]+/).filter(Boolean).slice(0, 2).map((w) => w[0].toUpperCase()).join('') || '?';
}

export function mountPresence({ avatars, typing, input }) {
  let session = null;
  let off = null;
  let saidAt = 0;
  let typedAt = 0;

  function render(viewers) {
    avatars.replaceChildren(
      ...viewers.map((v) => {
        const name = nameOf(v.principal);
        const title = `${name}${v.connections > 1 ? ` (${v.connections} tabs or devices)` : ''}${v.typing ? ', typing' : ''}`;
        return el('span', { class: `avatar${v.typing ? ' typing' : ''}`, title, dataset: { testid: 'presence-avatar', principal: v.principal, connections: String(v.connections) } },
          initials(name), v.connections > 1 ? el('sub', {}, String(v.connections)) : '');
      }),
    );
    // This tab's own typing is not news to it.
    const mine = Date.now() - typedAt < LAPSE_MS;
    const others = viewers.filter((v) => v.typing && !(mine && v.principal === ''));
    typing.hidden = others.length === 0;
    // The shared principal typing elsewhere is this user in another tab.
    const names = others.map((v) => (v.principal === '' ? 'another tab' : nameOf(v.principal)));
    setText(typing, names.length ? `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} typing…` : '');
  }

  input.addEventListener('input', () => {
    if (!session) return;
    typedAt = Date.now();
    if (typedAt - saidAt < SAY_EVERY_MS) return;
    saidAt = typedAt;
    session.typing(true).catch(() => {});
  });

  return {
    // follow shows the presence of s (null: none).
    follow(s) {
      off?.();
      session = s;
      off = s ? s.on('presence', render) : null;
      render(s ? s.presence : []);
    },
  };
}
