// Runs the conformance traces (testdata/traces/*.json, format in
// testdata/traces.go) through a Core. Shared by Node and Chromium: web APIs
// only. A step feeds event_b64 and checks, in this order of strictness:
// the exact Output bytes (output_b64), the readable commands and error
// code, and where the trace has them the view summary and the digest.

import { decode } from '../msgpack.js';

/** Decodes standard base64 (atob exists in browsers and Node 20). */
export function fromBase64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

// The readable view of testdata.Summarize: one telling field per part type.
const DETAIL = { tool: 'tool_name', action: 'action_type', error: 'code', interaction: 'interaction_id', file: 'url', data: 'data_type', context: 'tag' };

export function summarize(v) {
  return {
    status: v.status,
    total: v.total ?? 0,
    has_more_older: !!v.has_more_older,
    loading_older: !!v.loading_older,
    messages: (v.messages ?? []).map((m) => {
      const ms = { id: m.message_id, sequence: m.sequence, revision: m.revision, role: m.role };
      if (m.state) ms.state = m.state;
      ms.parts = (m.parts ?? []).map((p) => {
        const ps = { id: p.part_id, type: p.type };
        const state = p.type === 'interaction' ? p.status : p.state;
        if (state) ps.state = state;
        if (p.type === 'text' || p.type === 'reasoning') {
          if (p.text) ps.text = p.text;
        } else if (DETAIL[p.type] && p[DETAIL[p.type]]) {
          ps.detail = p[DETAIL[p.type]];
        }
        return ps;
      });
      return ms;
    }),
  };
}

// Keys sorted, so that two equal objects print the same.
function canon(v) {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) out[k] = canon(v[k]);
    return out;
  }
  return v;
}

const show = (v) => JSON.stringify(canon(v));

/**
 * Feeds every step of one trace to core.
 * @returns {{steps: number, failures: string[], digests: string[], outputs: string}}
 */
export function runTrace(core, trace) {
  const failures = [];
  const digests = [];
  let outputs = '';
  (trace.steps ?? []).forEach((step, i) => {
    const where = `${trace.file ?? trace.name} step ${i + 1}${step.note ? ` (${step.note})` : ''}`;
    const raw = core.handleRaw(fromBase64(step.event_b64));
    const got = toBase64(raw);
    outputs += got;
    const exp = step.expect ?? {};
    const out = raw.length ? decode(raw) : { commands: [] };
    if (got !== exp.output_b64) failures.push(`${where}: output bytes differ\n  got  ${got}\n  want ${exp.output_b64}`);
    if (show(out.commands ?? []) !== show(exp.commands ?? [])) {
      failures.push(`${where}: commands\n  got  ${show(out.commands)}\n  want ${show(exp.commands)}`);
    }
    if ((out.error?.code ?? '') !== (exp.error ?? '')) failures.push(`${where}: error code "${out.error?.code ?? ''}", want "${exp.error ?? ''}"`);
    if (exp.view) {
      const v = summarize(core.view());
      if (show(v) !== show(exp.view)) failures.push(`${where}: view\n  got  ${show(v)}\n  want ${show(exp.view)}`);
    }
    if (exp.digest) {
      const d = core.digest();
      digests.push(d);
      if (d !== exp.digest) failures.push(`${where}: digest ${d}, want ${exp.digest}`);
    }
  });
  return { steps: (trace.steps ?? []).length, failures, digests, outputs };
}

/** Runs every trace on a fresh Core of its own (traces are independent). */
export async function runTraces(Core, wasm, traces) {
  const results = [];
  for (const trace of traces) {
    const core = await Core.load(wasm);
    try {
      results.push({ name: trace.file ?? trace.name, ...runTrace(core, trace) });
    } catch (err) {
      results.push({ name: trace.file ?? trace.name, steps: 0, failures: [`${trace.file ?? trace.name}: threw ${err?.stack ?? err}`], digests: [], outputs: '' });
    } finally {
      core.free();
    }
  }
  return results;
}
