// Declarations of @agentsync/client/ai: an agentsync view as AI SDK
// UIMessage[]. Structural types (no import of 'ai'), assignable to `ai`'s
// UIMessage: examples/vite-react type-checks that with the `ai` it pins.
import type { ActionPart, ErrorPart, Message, View } from './index.js';

/** The data parts the bridge adds, by name (`data-${name}`). */
export interface AgentsyncDataTypes {
  'agentsync-question': { question: string; tool_call_id: string; status: 'pending' | 'resolved' | 'cancelled'; answer?: string };
  'agentsync-action': { action_type: string; state: ActionPart['state']; title?: string };
  'agentsync-error': { scope: ErrorPart['scope']; code: string; message: string; recoverable: boolean };
  'agentsync-context': { context: string; tag?: string };
}

type ToolBase = { type: `tool-${string}`; toolCallId: string };
export type AgentsyncToolUIPart = ToolBase &
  (
    | { state: 'input-streaming'; input?: unknown }
    | { state: 'input-available'; input: unknown }
    | { state: 'approval-requested'; input: unknown; approval: { id: string } }
    | { state: 'approval-responded'; input: unknown; approval: { id: string; approved: boolean } }
    | { state: 'output-available'; input: unknown; output: unknown; approval?: { id: string; approved: true } }
    | { state: 'output-error'; input: unknown; errorText: string; approval?: { id: string; approved: true } }
    | { state: 'output-denied'; input: unknown; approval: { id: string; approved: false } }
  );

export type AgentsyncUIPart =
  | { type: 'text'; text: string; state?: 'streaming' | 'done' }
  | { type: 'reasoning'; id: string; text: string; state: 'streaming' | 'done' }
  | { type: 'file'; mediaType: string; url: string; filename?: string }
  | AgentsyncToolUIPart
  | { type: 'data-agentsync-question'; id: string; data: AgentsyncDataTypes['agentsync-question'] }
  | { type: 'data-agentsync-action'; id: string; data: AgentsyncDataTypes['agentsync-action'] }
  | { type: 'data-agentsync-error'; id: string; data: AgentsyncDataTypes['agentsync-error'] }
  | { type: 'data-agentsync-context'; id: string; data: AgentsyncDataTypes['agentsync-context'] }
  /** A data part of the server's own data_type (the scripted model's "chart", say). */
  | { type: `data-${string}`; id?: string; data: unknown };

export interface AgentsyncUIMessage {
  /** The agentsync message_id. */
  id: string;
  role: 'user' | 'assistant';
  parts: AgentsyncUIPart[];
}

/** Every message of the view, oldest first, as UIMessages. */
export declare function toUIMessages(view: View | { messages: Message[] }): AgentsyncUIMessage[];
export declare function toUIMessage(message: Message): AgentsyncUIMessage;
/** The text of a failed tool's output: its `error` field, or the output as JSON. */
export declare function errorText(output: unknown): string;

/**
 * Wraps a ChatTransport so that useChat's stop() stops the agent's turn on
 * the server (POST {api}/{chatId}/stop, the session's stop action): an
 * aborted request alone (a reload, a lost network) stops nothing, since
 * the server resumes a turn across those.
 */
export declare function withServerStop<T extends { sendMessages: (...args: any[]) => Promise<unknown>; reconnectToStream: (...args: any[]) => Promise<unknown> }>(
  transport: T,
  opts: { api: string; headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>); fetch?: typeof fetch },
): T;
