// The end-to-end scenario, shared by Node and Chromium (it uses only web
// APIs and the package): create a session on a real syncserver, play turns
// of the scripted model (streamed text, reasoning, tool loops, approvals,
// questions, a long output) while the connection is dropped at random
// moments, then check the view against the server's snapshot:
//   - the digest of the view equals the digest of a fresh Core fed the
//     server's pages, and the messages are equal;
//   - no message is left streaming;
//   - every text ever shown to a listener is a prefix of its final text
//     (nothing shown twice, nothing torn).

import { Core } from '../core.js';
import { createSession } from '../index.js';
import { encode } from '../msgpack.js';

// mulberry32: a seeded PRNG, so a failing drop schedule can be replayed.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// cond(true) is called once on timeout: what it returns goes in the error.
async function waitFor(what, cond, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond(false);
    if (v) return v;
    if (Date.now() > end) {
      let detail = '';
      try {
        detail = await cond(true);
      } catch (err) {
        detail = String(err);
      }
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${typeof detail === 'string' ? `\n${detail}` : ''}`);
    }
    await sleep(20);
  }
}

// A readable picture of the view and of the server's head page, for errors.
async function describe(session) {
  const brief = (msgs) =>
    msgs
      .slice(-4)
      .map((m) => `  #${m.sequence} r${m.revision} ${m.role} ${m.state ?? ''} [${m.parts.map((p) => `${p.type}:${p.state ?? p.status ?? ''}${p.text !== undefined ? `(${p.text.length})` : ''}`).join(' ')}]`)
      .join('\n');
  let server = '';
  try {
    server = brief((await session.messages({ limit: 4 })).items);
  } catch (err) {
    server = String(err);
  }
  return `status ${session.status}, rebuilds ${session.rebuilds}\nview:\n${brief(session.view.messages)}\nserver:\n${server}`;
}

// PrefixWatch checks that every text a listener sees only ever grows by
// extension (or falls back to a prefix of what it showed, after a resync),
// so that everything shown is a prefix of the final text.
class PrefixWatch {
  constructor() {
    this.longest = new Map(); // "message_id/part_id" -> longest text seen
    this.lastMessage = new Map(); // message_id -> last message object seen (identity)
    this.violations = [];
    this.observations = 0;
  }

  observe(view) {
    for (const m of view.messages) {
      if (this.lastMessage.get(m.message_id) === m) continue; // unchanged: same object
      this.lastMessage.set(m.message_id, m);
      for (const p of m.parts) {
        if (p.type !== 'text' && p.type !== 'reasoning') continue;
        const key = `${m.message_id}/${p.part_id}`;
        const text = p.text ?? '';
        const prev = this.longest.get(key) ?? '';
        this.observations++;
        if (text.length >= prev.length) {
          if (!text.startsWith(prev)) this.violations.push({ key, shown: prev.slice(-80), now: text.slice(-80), at: prev.length });
          else this.longest.set(key, text);
        } else if (!prev.startsWith(text)) {
          this.violations.push({ key, shown: prev.slice(-80), now: text.slice(-80), at: text.length });
        }
      }
    }
  }

  checkFinal(messages) {
    const finals = new Map();
    for (const m of messages) for (const p of m.parts) finals.set(`${m.message_id}/${p.part_id}`, p.text ?? '');
    for (const [key, text] of this.longest) {
      const fin = finals.get(key);
      if (fin === undefined) continue; // a part that vanished with a failed step
      if (!fin.startsWith(text)) this.violations.push({ key, shown: text.slice(-80), final: fin.slice(-80) });
    }
  }
}

/** The default turns: one of each kind the scripted model plays. */
export const ALL_TURNS = [
  { text: 'scenario:text chars=3000' },
  { text: 'scenario:reasoning' },
  { text: 'scenario:tools city=Oslo' },
  { text: 'scenario:approval', answer: { approved: true } },
  { text: 'scenario:question', answer: { answer: 'blue' } },
  { text: 'hello there, echo this' },
  { text: 'scenario:long chars=100000 delta=16' },
  { text: 'scenario:approval', answer: { approved: false } },
  { text: 'scenario:data' },
  { text: 'scenario:tools city=Lima' },
  { text: 'scenario:long chars=60000 delta=8', stopAfterMs: 300 },
  { text: 'after the stop' },
];

/**
 * Pages of the server's snapshot answer a fresh core's fetch_page commands
 * (after a synthetic hello); load_older until it holds as much history as
 * `want` messages. Returns the fresh core's view and digest.
 */
async function freshDigest({ url, sessionId, wasm, token, headSequence, pageLimit }) {
  const core = await Core.load(wasm);
  const pageBytes = async (c) => {
    const q = new URLSearchParams();
    if (c.limit) q.set('limit', String(c.limit));
    if (c.before_sequence) q.set('before_sequence', String(c.before_sequence));
    q.set('include_internal', c.include_internal ? 'true' : 'false');
    const headers = { Accept: 'application/msgpack' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const res = await fetch(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/messages?${q}`, { headers });
    if (!res.ok) throw new Error(`page: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  };
  const run = async (out) => {
    if (out.error) throw new Error(`fresh core: ${out.error.code}: ${out.error.message}`);
    for (const c of out.commands) {
      if (c.type === 'fetch_page') await run(core.handle({ type: 'page', request_id: c.request_id, data: await pageBytes(c) }));
    }
  };
  const start = { type: 'start', session_id: sessionId };
  if (pageLimit) start.page_limit = pageLimit;
  await run(core.handle(start));
  await run(core.handle({ type: 'subscription_opened' }));
  await run(core.handleFrames(encode([{ seq: 1, kind: 'hello', protocol: 1, session_id: sessionId, head_sequence: headSequence }])));
  for (let i = 0; i < 1000 && core.view().has_more_older; i++) await run(core.handle({ type: 'load_older' }));
  const view = core.view();
  const digest = core.digest();
  core.free();
  return { view, digest };
}

/**
 * Runs the scenario; returns a report (the caller asserts on it).
 * @param {{url: string, wasm: any, WebSocket?: any, seed?: number, turns?: object[], dropEveryMs?: number, token?: string, log?: (s: string) => void}} o
 */
export async function runScenario(o) {
  const log = o.log ?? (() => {});
  const random = rng(o.seed ?? 1);
  const turns = o.turns ?? ALL_TURNS;
  const session = await createSession(o.url, { wasm: o.wasm, WebSocket: o.WebSocket, token: o.token, timeoutMs: 60000 });
  try {
    return await scenarioOn(session, o, log, random, turns);
  } finally {
    session.close(); // a failure too leaves no socket open
  }
}

// The scenario on a live session; returns the report.
async function scenarioOn(session, o, log, random, turns) {
  const watch = new PrefixWatch();
  const statuses = [];
  session.on('status', (e) => statuses.push(e.status));
  const errors = [];
  session.on('error', (e) => errors.push(`${e.code}: ${e.message}`));
  const unsubscribe = session.subscribe((v) => watch.observe(v));

  // Drop the connection at random moments while the turns play: mostly
  // while live (mid-stream), sometimes while still syncing (a page in
  // flight). Not always while syncing: the backoff only resets after a live
  // frame, so a socket that never got to live would back off to 30 s.
  let dropping = true;
  let drops = 0;
  const dropper = (async () => {
    while (dropping) {
      await sleep(20 + random() * (o.dropEveryMs ?? 400));
      const when = session.status === 'live' || random() < 0.15;
      if (dropping && when && session.dropConnection()) drops++;
    }
  })();

  const answered = new Set();
  const replies = [];
  try {
    for (const turn of turns) {
      const user = await session.send(turn.text);
      log(`turn ${user.sequence}: ${turn.text}`);
      if (turn.stopAfterMs) {
        await sleep(turn.stopAfterMs);
        try {
          await session.action('stop');
        } catch (err) {
          if (err.code !== 'conflict') throw err; // the turn had already ended
        }
      }
      await waitFor(`the reply to "${turn.text}"`, async (timedOut) => {
        if (timedOut) return describe(session);
        const msgs = session.view.messages;
        for (const m of msgs) {
          for (const p of m.parts) {
            if (p.type === 'interaction' && p.status === 'pending' && !answered.has(p.interaction_id)) {
              answered.add(p.interaction_id);
              try {
                await session.answer(p.interaction_id, turn.answer ?? { approved: true });
              } catch (err) {
                if (err.code !== 'not_pending') throw err;
              }
            }
          }
        }
        const last = msgs[msgs.length - 1];
        const pending = msgs.some((m) => m.parts.some((p) => p.type === 'interaction' && p.status === 'pending'));
        return last && last.role === 'agent' && last.sequence > user.sequence && last.state === 'done' && !pending;
      }, 120000);
      const reply = session.view.messages.filter((m) => m.sequence > user.sequence);
      const parts = reply.flatMap((m) => m.parts);
      replies.push({
        turn: turn.text,
        types: parts.map((p) => p.type),
        text: parts.filter((p) => p.type === 'text').reduce((n, p) => n + (p.text ?? '').length, 0),
      });
    }
  } finally {
    dropping = false;
    await dropper;
  }

  // Settle: live again, and the view holds the whole history.
  await waitFor('live', () => session.status === 'live', 60000);
  await sleep(200);
  for (let i = 0; i < 100 && session.view.has_more_older; i++) await session.loadOlder();
  unsubscribe();
  const view = session.view;
  const digest = session.digest();

  // The server's snapshot: every page, oldest first.
  const snapshot = [];
  let before;
  for (;;) {
    const page = await session.messages({ limit: 200, before_sequence: before });
    snapshot.unshift(...page.items);
    if (!page.has_more || !page.next_before_sequence) break;
    before = page.next_before_sequence;
  }
  const head = snapshot.length ? snapshot[snapshot.length - 1].sequence : 0;
  const fresh = await freshDigest({ url: o.url, sessionId: session.sessionId, wasm: o.wasm, token: o.token, headSequence: head });
  watch.checkFinal(snapshot);
  session.close();

  return {
    sessionId: session.sessionId,
    replies,
    drops,
    rebuilds: session.rebuilds,
    statuses: statuses.length,
    observations: watch.observations,
    violations: watch.violations,
    errors,
    digest,
    freshDigest: fresh.digest,
    viewMessages: view.messages,
    freshMessages: fresh.view.messages,
    snapshot,
    streaming: view.messages.filter((m) => m.state === 'streaming').map((m) => m.message_id),
    longestText: Math.max(0, ...view.messages.flatMap((m) => m.parts.map((p) => (p.text ?? '').length))),
  };
}
