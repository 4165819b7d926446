// Compile-time checks of the package's types, run by `tsc --strict` in the
// tests: each @ts-expect-error line must fail to compile (a field the
// narrowed type does not have), or tsc reports the directive as unused.
import type { ApprovalResponse, Part, QuestionResponse, ResponseFor, Session, SessionInfo, View } from '@agentsync/client';
import { ActionRetry, ToolAwaitingApproval, isApproval, isQuestion } from '@agentsync/client';
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

// isApproval and isQuestion narrow the part, its response included (a
// check of p.request.kind narrows only the request).
export function responseText(p: Part): string {
  if (isApproval(p)) {
    const r: ApprovalResponse | undefined = p.response;
    // @ts-expect-error an approval's response has no answer
    void p.response?.answer;
    return r ? String(r.approved) : 'pending';
  }
  if (isQuestion(p)) {
    const r: QuestionResponse | undefined = p.response;
    // @ts-expect-error a question's response has no approved
    void p.response?.approved;
    return r?.answer ?? 'pending';
  }
  return '';
}

// answer takes the response the part's kind takes.
export async function approve(s: Session, p: Part): Promise<void> {
  if (isApproval(p)) {
    await s.answer(p, { approved: true });
    // @ts-expect-error an approval is not answered with text
    await s.answer(p, { answer: 'yes' });
  }
  const q: ResponseFor<'question'> = { answer: 'blue' };
  if (isQuestion(p)) await s.answer(p, q);
}

// The wire's constants are their values' literal types.
export const retryAction: 'retry' = ActionRetry;
export const awaiting: 'awaiting-approval' = ToolAwaitingApproval;
export const titled = (i: SessionInfo): string => i.title;

export const lowLevel = [encode, decode, Core.load, ABI_VERSION, Wasi] as const;
export const viewOf = (s: SessionState): View => s.view;
