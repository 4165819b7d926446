// Compile-time checks of the package's types, run by `tsc --strict` in the
// tests: each @ts-expect-error line must fail to compile (a field the
// narrowed type does not have), or tsc reports the directive as unused.
import type { Part, View } from '@agentsync/client';
import type { SessionState } from '@agentsync/client/react';
import { decode, encode } from '@agentsync/client/msgpack.js';
import { ABI_VERSION, Core } from '@agentsync/client/core.js';
import { Wasi } from '@agentsync/client/wasi.js';

export function describe(p: Part): string {
  if (p.type === 'interaction') {
    // @ts-expect-error an interaction has no tool_name of its own
    void p.tool_name;
    if (p.request.kind === 'approval') return `approve ${p.request.tool_name}(${JSON.stringify(p.request.input)})`;
    // @ts-expect-error a question request has no tool_name
    void p.request.tool_name;
    return p.request.question;
  }
  if (p.type === 'tool') {
    if (p.state === 'output-available') return JSON.stringify(p.output);
    // @ts-expect-error output is known to exist only once output-available
    const o: unknown = p.output;
    return `${p.tool_name} ${p.state} ${String(o)}`;
  }
  // @ts-expect-error only text and reasoning parts have text
  void p.text;
  if (p.type === 'text' || p.type === 'reasoning') return p.text;
  return p.type;
}

export const lowLevel = [encode, decode, Core.load, ABI_VERSION, Wasi] as const;
export const viewOf = (s: SessionState): View => s.view;
