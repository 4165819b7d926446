// Compile-time check of the AI SDK bridge against the `ai` package's own
// types: toUIMessages gives what useChat's components take (UIMessage[]),
// and the AI SDK's own helpers narrow its parts. Not imported by the app.
import { isToolUIPart, type ChatTransport, type UIMessage } from 'ai';
import type { Session, View } from '@agentsync/client';
import { AgentsyncChatTransport, loadUIMessages, toUIMessages } from '@agentsync/client/ai';

export function forUseChat(view: View): UIMessage[] {
  return toUIMessages(view);
}

export function toolStates(messages: UIMessage[]): string[] {
  return messages.flatMap((m) => m.parts.filter(isToolUIPart).map((p) => p.state));
}

// AgentsyncChatTransport is the `ai` package's own ChatTransport: useChat
// takes it as it takes DefaultChatTransport.
export function transportFor(session: Session): ChatTransport<UIMessage> {
  return new AgentsyncChatTransport({ session, onSessionChange: (s) => void s.sessionId });
}

export async function historyFor(session: Session): Promise<UIMessage[]> {
  const page = await loadUIMessages(session, { limit: 50 });
  const older = page.hasMore ? await loadUIMessages(session, { limit: 50, before: page.before }) : undefined;
  return [...(older?.messages ?? []), ...page.messages];
}
