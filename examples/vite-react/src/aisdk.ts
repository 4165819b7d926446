// Compile-time check of the AI SDK bridge against the `ai` package's own
// types: toUIMessages gives what useChat's components take (UIMessage[]),
// and the AI SDK's own helpers narrow its parts. Not imported by the app.
import { isToolUIPart, type UIMessage } from 'ai';
import type { View } from '@agentsync/client';
import { toUIMessages } from '@agentsync/client/ai';

export function forUseChat(view: View): UIMessage[] {
  return toUIMessages(view);
}

export function toolStates(messages: UIMessage[]): string[] {
  return messages.flatMap((m) => m.parts.filter(isToolUIPart).map((p) => p.state));
}
