// How many times each message's row rendered: the browser test reads it to
// check that a delta re-renders only its own message's row.
declare global {
  interface Window {
    rowRenders: Record<string, number>;
  }
}

window.rowRenders = {};

export function countRender(messageId: string) {
  window.rowRenders[messageId] = (window.rowRenders[messageId] ?? 0) + 1;
}
