// Steer placement: a message the user sends while the agent writes (a
// steer) gets a sequence after the agent message, yet the agent's reply to
// it is written into that same agent message. Shown in sequence order, the
// reply would sit above the message it answers.
//
// The server marks where the turn's steps first read a steer: a data part
// {data_type: "agentsync.read", data: {user_sequence: N}} (docs/protocol.md
// §2). placeSteers cuts an agent message at each marker and places what
// follows it right after user message N: the data proves the placement, no
// timing guess. Markers whose message is not in the view leave the parts
// where they are.

export const READ_MARKER = 'agentsync.read';

// message object -> {sig, entries}: an unchanged message keeps its segment
// objects, so MessageView skips them as it skips any unchanged message.
const cache = new WeakMap();

/**
 * placeSteers returns the display entries of messages (oldest first):
 * [{key, msg}], where msg is the message itself or a segment of an agent
 * message ({...msg, parts: some parts, segment: k, continued: bool}).
 */
export function placeSteers(messages) {
  let any = false;
  for (const m of messages) {
    if (m.role === 'agent' && m.parts?.some(isMarker)) {
      any = true;
      break;
    }
  }
  if (!any) return messages.map((msg) => ({ key: msg.message_id, msg }));

  const users = new Set();
  for (const m of messages) if (m.role === 'user') users.add(m.sequence);
  const out = [];
  const after = new Map(); // user sequence -> entries to show right after it
  for (const m of messages) {
    if (m.role === 'agent' && m.parts?.some(isMarker)) {
      const [head, ...rest] = segments(m, users);
      out.push(head);
      for (const seg of rest) {
        const list = after.get(seg.msg.segment) ?? [];
        list.push(seg);
        after.set(seg.msg.segment, list);
      }
    } else {
      out.push({ key: m.message_id, msg: m });
    }
    if (m.role === 'user' && after.has(m.sequence)) out.push(...after.get(m.sequence));
  }
  return out;
}

function isMarker(p) {
  return p.type === 'data' && p.data_type === READ_MARKER;
}

// segments cuts m at its markers whose user message is in the view (and
// after m); the first segment keeps the message's key.
function segments(m, users) {
  const cuts = [{ at: 0, seq: 0 }];
  m.parts.forEach((p, i) => {
    const seq = Number(p.data?.user_sequence);
    if (isMarker(p) && seq > m.sequence && users.has(seq)) cuts.push({ at: i, seq });
  });
  const sig = cuts.map((c) => c.at).join(',');
  const hit = cache.get(m);
  if (hit?.sig === sig) return hit.entries;
  const entries = cuts.map((c, k) => {
    const end = k + 1 < cuts.length ? cuts[k + 1].at : m.parts.length;
    if (cuts.length === 1) return { key: m.message_id, msg: m };
    // A segment after a cut starts with its marker: leave it out.
    const parts = m.parts.slice(k === 0 ? 0 : c.at + 1, end);
    return {
      key: k === 0 ? m.message_id : `${m.message_id}~${c.seq}`,
      msg: { ...m, parts, segment: c.seq, continued: k + 1 < cuts.length },
    };
  });
  cache.set(m, { sig, entries });
  return entries;
}
