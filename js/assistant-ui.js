// The bridge to assistant-ui: a runtime (useExternalStoreRuntime of
// @assistant-ui/react) on an agentsync Session, so assistant-ui's Thread,
// BranchPicker, edit composer, attachments and tool UIs render the session
// and act on it. The session's view is the store: assistant-ui never holds
// a message the server does not.
//
//   send (the composer)        -> Session.send
//   edit (the edit composer)   -> Session.edit: a fork with the new parts
//   reload (regenerate)        -> Session.regenerate: a fork that answers again
//   cancel                     -> the stop action
//   BranchPicker               -> Session.switchBranch among the alternatives
//                                 of that position (Session.branches)
//   a tool's approval          -> Session.answer (respondToApproval)
//   a question to the user     -> Session.answer with the text answer
//
// The conversation tree goes to assistant-ui as a message repository: the
// session's path, and beside each message of it that has other versions
// those versions' messages (the first message of each), in the order they
// were made, so ‹ n / count › is the server's.
//
// docs/assistant-ui.md has the guide and the part mapping.

import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { fromThreadMessageLike, useExternalStoreRuntime } from '@assistant-ui/react';
import { ActionStop } from './constants.js';
import { AgentsyncError } from './errors.js';
import { EMPTY_VIEW } from './empty-view.js';

const NONE = Object.freeze({});
const noSession = () => Promise.reject(new AgentsyncError('closed', 'useAgentsyncRuntime: no session yet'));

// ------------------------------------------------------------ conversion

/**
 * One agentsync message as assistant-ui's ThreadMessageLike (id =
 * message_id; metadata.custom holds its sequence and session).
 * @param {import('./index.js').Message} message
 */
export function toThreadMessageLike(message) {
  const user = message.role === 'user';
  const byCall = new Map(); // tool_call_id -> interaction part
  for (const p of message.parts) {
    if (p.type === 'interaction' && p.request?.tool_call_id) byCall.set(p.request.tool_call_id, p);
  }
  const tools = new Set(message.parts.filter((p) => p.type === 'tool').map((p) => p.tool_call_id));
  const content = [];
  for (const p of message.parts) {
    const part = toPart(p, user, byCall, tools);
    if (part) content.push(part);
  }
  const like = {
    id: message.message_id,
    role: user ? 'user' : 'assistant',
    content,
    createdAt: new Date(message.created_at),
    metadata: {
      custom: { sequence: message.sequence, session_id: message.session_id, state: message.state ?? null },
    },
  };
  if (!user) like.status = statusOf(message);
  return like;
}

// The message's status in assistant-ui's terms.
function statusOf(message) {
  if (pendingInteraction(message)) return { type: 'requires-action', reason: 'tool-calls' };
  if (message.state === 'streaming') return { type: 'running' };
  // A stop ends the turn with an error part too: the stop comes first.
  if (message.parts.some((p) => p.type === 'action' && p.action_type === ActionStop)) return { type: 'incomplete', reason: 'cancelled' };
  const error = message.parts.find((p) => p.type === 'error' && p.scope !== 'step');
  if (error) return { type: 'incomplete', reason: 'error', error: error.message };
  return { type: 'complete', reason: 'stop' };
}

function pendingInteraction(message) {
  return message.parts.some((p) => p.type === 'interaction' && p.status === 'pending');
}

function toPart(p, user, byCall, tools) {
  switch (p.type) {
    case 'text':
      return { type: 'text', id: p.part_id, text: p.text ?? '' };
    case 'reasoning':
      return { type: 'reasoning', id: p.part_id, text: p.text ?? '' };
    case 'file':
      return fileOf(p);
    case 'data':
      return withOptional({ type: 'data', name: p.data_type, data: p.data ?? null }, 'id', p.data_id);
    case 'tool':
      if (user) return null;
      return toolCall(p, byCall.get(p.tool_call_id));
    case 'interaction':
      // Shown on its tool call (approval); one without a tool part shows as data.
      if (p.request?.tool_call_id && tools.has(p.request.tool_call_id)) return null;
      return { type: 'data', id: p.interaction_id, name: 'agentsync-interaction', data: p };
    case 'action':
      return { type: 'data', id: p.action_id, name: 'agentsync-action', data: withOptional({ action_type: p.action_type, state: p.state }, 'title', p.title) };
    case 'error':
      return { type: 'data', id: p.part_id, name: 'agentsync-error', data: { scope: p.scope, code: p.code, message: p.message, recoverable: !!p.recoverable } };
    case 'context':
      return { type: 'data', id: p.part_id, name: 'agentsync-context', data: withOptional({ context: p.context ?? '' }, 'tag', p.tag) };
    default:
      return null;
  }
}

function fileOf(p) {
  if (typeof p.media_type === 'string' && p.media_type.startsWith('image/')) {
    return withOptional({ type: 'image', image: p.url }, 'filename', p.filename);
  }
  const comma = p.url.indexOf(',');
  const part = p.url.startsWith('data:') && comma > 0 && p.url.slice(0, comma).endsWith(';base64')
    ? { type: 'file', data: p.url.slice(comma + 1), mimeType: p.media_type }
    : { type: 'file', data: p.url, mimeType: p.media_type, sourceType: 'url' };
  return withOptional(part, 'filename', p.filename);
}

// A tool part as a tool-call, its interaction (an approval, or a question
// to the user) as the call's `approval` gate.
function toolCall(p, interaction) {
  const input = p.input;
  const args = input && typeof input === 'object' && !Array.isArray(input) ? input : {};
  const part = {
    type: 'tool-call',
    toolCallId: p.tool_call_id,
    toolName: p.tool_name,
    args,
    argsText: input === undefined ? '' : JSON.stringify(input),
  };
  if (p.state === 'output-available') part.result = p.output ?? null;
  else if (p.state === 'output-error') {
    part.result = p.output ?? null;
    part.isError = true;
  } else if (p.state === 'output-denied') part.result = p.output ?? { denied: true };
  if (interaction) part.approval = approvalOf(interaction);
  return part;
}

function approvalOf(i) {
  const question = i.request?.kind === 'question';
  const approval = { id: i.interaction_id };
  if (question) {
    approval.prompt = i.request.question ?? '';
    approval.display = 'text';
  }
  if (i.status === 'resolved') {
    if (question) {
      approval.approved = true;
      if (typeof i.response?.answer === 'string') approval.text = i.response.answer;
    } else approval.approved = i.response?.approved === true;
  } else if (i.status === 'cancelled') {
    approval.resolution = i.response?.expired ? 'expired' : 'cancelled';
  }
  return approval;
}

function withOptional(obj, key, value) {
  if (value !== undefined && value !== null && value !== '') obj[key] = value;
  return obj;
}

// ThreadMessages by message object: a Session keeps an unchanged message's
// object from one view to the next, so its ThreadMessage keeps its
// identity too and assistant-ui skips its row.
const converted = new WeakMap();
const convertedBranch = new WeakMap();

/**
 * One message as assistant-ui's ThreadMessage; the same object for the
 * same message object.
 * @param {import('./index.js').Message} message
 */
export function toThreadMessage(message) {
  let m = converted.get(message);
  if (!m) {
    m = fromThreadMessageLike(toThreadMessageLike(message), message.message_id, { type: 'complete', reason: 'unknown' });
    converted.set(message, m);
  }
  return m;
}

// Another version's message at a position of the path: it carries the
// session to switch to.
function branchMessage(branch, pathMessage) {
  const m = branch.message;
  if (m) {
    let t = convertedBranch.get(m);
    if (!t) {
      const like = toThreadMessageLike(m);
      like.metadata.custom = { ...like.metadata.custom, branch: branch.session_id };
      t = fromThreadMessageLike(like, m.message_id, { type: 'complete', reason: 'unknown' });
      convertedBranch.set(m, t);
    }
    return t;
  }
  // A version with nothing at the position yet (a regeneration not begun).
  const role = pathMessage.role === 'user' ? 'user' : 'assistant';
  const like = {
    id: `agentsync-branch:${branch.session_id}:${pathMessage.sequence}`,
    role,
    content: [],
    metadata: { custom: { sequence: pathMessage.sequence, session_id: branch.session_id, branch: branch.session_id } },
  };
  if (role === 'assistant') like.status = { type: 'running' };
  return fromThreadMessageLike(like, like.id, { type: 'running' });
}

// What the user wrote (an AppendMessage of the composer or the edit
// composer, attachments included) as the parts of an agentsync message.
export function toUserParts(message) {
  const parts = [];
  const add = (p) => {
    switch (p?.type) {
      case 'text':
        if (p.text) parts.push({ type: 'text', text: p.text });
        break;
      case 'image':
        parts.push(withOptional({ type: 'file', url: p.image, media_type: mediaTypeOf(p.image, 'image/png') }, 'filename', p.filename));
        break;
      case 'file': {
        const url = p.sourceType === 'url' || /^(https?:|data:|blob:)/.test(p.data) ? p.data : `data:${p.mimeType};base64,${p.data}`;
        parts.push(withOptional({ type: 'file', url, media_type: p.mimeType }, 'filename', p.filename));
        break;
      }
      case 'data':
        parts.push(withOptional({ type: 'data', data_type: p.name, data: p.data ?? null }, 'data_id', p.id));
        break;
      default:
        break;
    }
  };
  for (const p of message.content ?? []) add(p);
  for (const a of message.attachments ?? []) for (const p of a.content ?? []) add(p);
  return parts;
}

function mediaTypeOf(url, fallback) {
  const m = /^data:([^;,]+)/.exec(url);
  return m ? m[1] : fallback;
}

// ------------------------------------------------------------ the runtime

/**
 * An assistant-ui runtime on an agentsync session: pass it to
 * <AssistantRuntimeProvider runtime={...}>. The runtime follows the
 * session through branch switches, edits and regenerations (each a
 * switchBranch: the old Session is closed and onSessionChange is told the
 * new one); a new `session` argument starts over from it.
 * @param {import('./index.js').Session | null | undefined} session
 * @param {import('./assistant-ui.js').AgentsyncRuntimeOptions} [opts]
 */
export function useAgentsyncRuntime(session, opts = {}) {
  const { onSessionChange, adapters, delivery, onError } = opts;
  const [own, setOwn] = useState({ given: session, current: session });
  let current = own.current;
  if (own.given !== session) {
    current = session;
    setOwn({ given: session, current: session });
  }
  const currentRef = useRef(current);
  currentRef.current = current;
  const optsRef = useRef({ onSessionChange, onError });
  optsRef.current = { onSessionChange, onError };

  const subscribe = useCallback((onChange) => (current ? current.subscribe(() => onChange()) : () => {}), [current]);
  const snapshot = useCallback(() => (current ? current.view : EMPTY_VIEW), [current]);
  const view = useSyncExternalStore(subscribe, snapshot, snapshot);

  // The positions with more than one version, read once per session and
  // again when the path grows, kept current by the subscription's signals.
  const [alts, setAlts] = useState({ session: null, bySequence: NONE });
  const [reads, setReads] = useState(0);
  const length = view.messages.length;
  useEffect(() => {
    if (!current || view.status !== 'live') return undefined;
    let live = true;
    current.alternatives().then(
      (items) => {
        if (!live) return;
        const bySequence = {};
        for (const a of items) bySequence[a.sequence] = { count: a.count, index: a.index };
        setAlts({ session: current, bySequence });
      },
      // A server without the tree (or a failed read): one version each.
      () => live && setAlts((prev) => (prev.session === current ? prev : { session: current, bySequence: {} })),
    );
    return () => {
      live = false;
    };
  }, [current, length, reads, view.status]);
  useEffect(() => {
    if (!current) return undefined;
    return current.on('alternatives', ({ sequence, count, index }) =>
      setAlts((prev) => {
        if (prev.session !== current) return prev;
        const bySequence = { ...prev.bySequence };
        if (count > 1) bySequence[sequence] = { count, index };
        else delete bySequence[sequence];
        return { session: current, bySequence };
      }),
    );
  }, [current]);
  const altsLoaded = !!current && alts.session === current;
  const alternatives = altsLoaded ? alts.bySequence : NONE;

  // The versions at each such position (Session.branches), by sequence.
  const [lists, setLists] = useState({ session: null, bySequence: NONE });
  const listsOf = lists.session === current ? lists.bySequence : NONE;
  const reading = useRef(new Set());
  useEffect(() => {
    if (!current) return;
    for (const [seq, a] of Object.entries(alternatives)) {
      const have = listsOf[seq];
      if (have && have.items.length === a.count && have.index === a.index) continue;
      const key = `${current.sessionId}:${seq}:${a.count}:${a.index}`;
      if (reading.current.has(key)) continue;
      reading.current.add(key);
      current.branches(Number(seq)).then(
        (list) => {
          reading.current.delete(key);
          setLists((prev) => {
            const bySequence = prev.session === current ? { ...prev.bySequence } : {};
            bySequence[seq] = list;
            return { session: current, bySequence };
          });
        },
        () => reading.current.delete(key),
      );
    }
  }, [current, alternatives, listsOf]);

  // The ids assistant-ui was given: it keeps a position's versions in the
  // order it first saw them, so a version is never shown before those
  // made before it. After a switch of session the last tree stays until
  // the new path's versions are all read.
  const shown = useRef(new Set());
  const last = useRef({ session: null, repository: null });
  const repository = useMemo(() => {
    const visible = view.messages.filter((m) => m.visibility !== 'internal');
    const ready = altsLoaded && visible.every((m) => {
      const alt = alternatives[m.sequence];
      return !alt || listsOf[m.sequence]?.items.length === alt.count;
    });
    if (!ready && last.current.repository && last.current.session !== current) return last.current.repository;
    const messages = [];
    let parentId = null;
    let headId = null;
    if (current && altsLoaded) {
      for (const m of visible) {
        const alt = alternatives[m.sequence];
        const list = listsOf[m.sequence];
        if (alt && list && list.items.length === alt.count) {
          for (const b of [...list.items].sort((x, y) => x.index - y.index)) {
            const message = b.index === list.index ? toThreadMessage(m) : branchMessage(b, m);
            messages.push({ parentId, message });
          }
        } else {
          // Not read yet: a later version waits for its elders.
          if (alt && alt.index > 0 && !shown.current.has(m.message_id)) break;
          messages.push({ parentId, message: toThreadMessage(m) });
        }
        parentId = m.message_id;
        headId = m.message_id;
      }
    }
    for (const { message } of messages) shown.current.add(message.id);
    const repo = { headId, messages };
    last.current = { session: current, repository: repo };
    return repo;
  }, [current, view, altsLoaded, alternatives, listsOf]);

  const follow = useCallback(async (sessionId) => {
    const from = currentRef.current;
    if (!from || sessionId === from.sessionId) return from;
    const next = await from.switchBranch(sessionId);
    setOwn((prev) => (prev.current === from ? { ...prev, current: next } : prev));
    optsRef.current.onSessionChange?.(next);
    return next;
  }, []);

  const fail = useCallback((err) => {
    if (optsRef.current.onError) optsRef.current.onError(err);
    else throw err;
  }, []);

  const sequenceOf = (id) => {
    const s = currentRef.current;
    const m = s?.view.messages.find((x) => x.message_id === id);
    if (!m) throw new AgentsyncError('not_found', `message ${id} is not in the view of session ${s?.sessionId}`);
    return m.sequence;
  };

  const isRunning = running(view);

  return useExternalStoreRuntime({
    messageRepository: repository,
    isRunning,
    isLoading: !!current && view.status !== 'live' && view.messages.length === 0,
    isDisabled: !current,
    hasEarlier: view.has_more_older,
    onLoadEarlier: () => (currentRef.current ? currentRef.current.loadOlder() : noSession()),
    adapters,
    onNew: async (message) => {
      const s = currentRef.current;
      if (!s) return noSession();
      const parts = toUserParts(message);
      if (parts.length === 0) return undefined;
      await s.send(parts, delivery ? { delivery } : undefined).catch(fail);
      return undefined;
    },
    onEdit: async (message) => {
      const s = currentRef.current;
      if (!s) return noSession();
      try {
        const seq = message.sourceId ? sequenceOf(message.sourceId) : (message.parentId ? sequenceOf(message.parentId) + 1 : 1);
        if (seq < 2) throw new AgentsyncError('bad_request', 'the first message of a session cannot be edited (a fork starts at sequence 2)');
        const info = await s.edit(seq, toUserParts(message));
        await follow(info.session_id);
        setReads((n) => n + 1);
      } catch (err) {
        fail(err);
      }
      return undefined;
    },
    onReload: async (parentId) => {
      const s = currentRef.current;
      if (!s) return noSession();
      try {
        const seq = parentId ? sequenceOf(parentId) + 1 : 2;
        const info = await s.regenerate(seq);
        await follow(info.session_id);
        setReads((n) => n + 1);
      } catch (err) {
        fail(err);
      }
      return undefined;
    },
    onCancel: async () => {
      const s = currentRef.current;
      if (!s) return undefined;
      await s.action(ActionStop).catch((err) => {
        if (err?.code !== 'conflict') fail(err); // conflict: no turn ran
      });
      return undefined;
    },
    onRespondToToolApproval: async ({ approvalId, approved, text }) => {
      const s = currentRef.current;
      if (!s) return noSession();
      const response = typeof text === 'string' ? { answer: text } : { approved: !!approved };
      await s.answer(approvalId, response).catch((err) => {
        if (err?.code !== 'not_pending') throw err; // answered already: the message shows the outcome
      });
      return undefined;
    },
    // A BranchPicker click: assistant-ui selected another version of a
    // position; the session of that version becomes the one shown.
    setMessages: (messages) => {
      const target = messages.find((m) => m.metadata?.custom?.branch);
      if (!target) return;
      follow(target.metadata.custom.branch).catch(fail);
    },
  });
}

// Whether a turn runs with nothing to answer: an agent message streams
// (the last, or one a steer came after), or the last user message waits
// for its turn's message (a steer read by a turn that ended does not).
function running(view) {
  const msgs = view.messages;
  let tail;
  for (let i = msgs.length - 1; i >= 0 && i >= msgs.length - 50; i--) {
    const m = msgs[i];
    if (m.visibility === 'internal') continue;
    tail ??= m;
    if (m.role === 'agent') {
      if (m.state === 'streaming') return !pendingInteraction(m);
      if (tail.role === 'user' && tail.turn_id && m.turn_id === tail.turn_id) return false;
      if (m !== tail) break;
    }
  }
  if (!tail || tail.role !== 'user') return false;
  return !msgs.some((m) => m.role === 'agent' && tail.turn_id && m.turn_id === tail.turn_id && m.state === 'done');
}
