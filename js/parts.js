// Type guards for the parts of a message. TypeScript narrows a union by a
// property of its own (part.type, a tool's state), not by a nested one: a
// check of part.request.kind narrows the request, never the part, so the
// part's response would stay either kind. These narrow the part itself.

import { InteractionKindApproval, InteractionKindQuestion, PartInteraction } from './constants.js';

/** Whether part is an interaction asking for an approval (its response is {approved}). */
export function isApproval(part) {
  return part?.type === PartInteraction && part.request?.kind === InteractionKindApproval;
}

/** Whether part is an interaction asking a question (its response is {answer}). */
export function isQuestion(part) {
  return part?.type === PartInteraction && part.request?.kind === InteractionKindQuestion;
}
