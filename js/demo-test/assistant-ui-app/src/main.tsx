// An assistant-ui Thread (its primitives, as the shadcn Thread composes
// them) on an agentsync session: ?server=URL&session=ID.
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import {
  ActionBarPrimitive,
  AssistantRuntimeProvider,
  BranchPickerPrimitive,
  ComposerPrimitive,
  MessagePrimitive,
  SimpleImageAttachmentAdapter,
  ThreadPrimitive,
} from '@assistant-ui/react';
import type { ImageMessagePartComponent, ReasoningMessagePartComponent, TextMessagePartComponent, ToolCallMessagePartComponent } from '@assistant-ui/react';
import { connect, type Session } from '@agentsync/client';
import { useAgentsyncRuntime } from '@agentsync/client/assistant-ui';

declare global {
  interface Window {
    agentsyncSession?: Session;
  }
}

const params = new URLSearchParams(location.search);

const Text: TextMessagePartComponent = ({ text }) => <p className="part" data-type="text">{text}</p>;
const Image: ImageMessagePartComponent = ({ image, filename }) => <img className="part" data-type="image" src={image} alt={filename ?? ''} />;
const Reasoning: ReasoningMessagePartComponent = ({ text }) => <p className="part" data-type="reasoning">{text}</p>;

// One tool UI for every tool: its name, an approval card while the call
// waits for one, its result.
const Tool: ToolCallMessagePartComponent = ({ toolName, result, approval, respondToApproval }) => {
  const waiting = approval && approval.approved === undefined && !approval.resolution;
  const decided = approval ? (waiting ? 'pending' : approval.resolution ?? (approval.approved ? 'approved' : 'denied')) : '';
  return (
    <div className="part" data-type="tool" data-tool={toolName} data-approval={decided}>
      <b>{toolName}</b>
      {waiting && (
        <span className="approval-card">
          <button data-approve onClick={() => respondToApproval({ approved: true })}>Approve</button>
          <button data-deny onClick={() => respondToApproval({ approved: false })}>Deny</button>
        </span>
      )}
      {result !== undefined && <pre className="result">{JSON.stringify(result)}</pre>}
    </div>
  );
};

const parts = { Text, Reasoning, Image, tools: { Fallback: Tool } };
// Images attached in the composer go as file parts (data: URLs).
const adapters = { attachments: new SimpleImageAttachmentAdapter() };

const BranchPicker = () => (
  <BranchPickerPrimitive.Root className="branch-picker">
    <BranchPickerPrimitive.Previous className="prev">‹</BranchPickerPrimitive.Previous>
    <span className="branch-number"><BranchPickerPrimitive.Number /></span>/<span className="branch-count"><BranchPickerPrimitive.Count /></span>
    <BranchPickerPrimitive.Next className="next">›</BranchPickerPrimitive.Next>
  </BranchPickerPrimitive.Root>
);

const UserMessage = () => (
  <MessagePrimitive.Root className="msg" data-role="user">
    <MessagePrimitive.Parts components={parts} />
    <ActionBarPrimitive.Root autohide="never">
      <ActionBarPrimitive.Edit className="edit">Edit</ActionBarPrimitive.Edit>
    </ActionBarPrimitive.Root>
    <BranchPicker />
  </MessagePrimitive.Root>
);

const AssistantMessage = () => (
  <MessagePrimitive.Root className="msg" data-role="assistant">
    <MessagePrimitive.Parts components={parts} />
    <ActionBarPrimitive.Root autohide="never" hideWhenRunning>
      <ActionBarPrimitive.Reload className="reload">Regenerate</ActionBarPrimitive.Reload>
    </ActionBarPrimitive.Root>
    <BranchPicker />
  </MessagePrimitive.Root>
);

const EditComposer = () => (
  <ComposerPrimitive.Root className="edit-composer">
    <ComposerPrimitive.Input className="edit-input" />
    <ComposerPrimitive.Cancel className="edit-cancel">Cancel</ComposerPrimitive.Cancel>
    <ComposerPrimitive.Send className="edit-send">Save</ComposerPrimitive.Send>
  </ComposerPrimitive.Root>
);

const Thread = () => (
  <ThreadPrimitive.Root className="thread">
    <ThreadPrimitive.Viewport id="messages">
      <ThreadPrimitive.Messages components={{ UserMessage, AssistantMessage, EditComposer }} />
    </ThreadPrimitive.Viewport>
    <ComposerPrimitive.Root className="composer">
      <ComposerPrimitive.AddAttachment id="attach">Attach</ComposerPrimitive.AddAttachment>
      <ComposerPrimitive.Input id="draft" />
      <ComposerPrimitive.Send id="send">Send</ComposerPrimitive.Send>
      <ComposerPrimitive.Cancel id="stop">Stop</ComposerPrimitive.Cancel>
    </ComposerPrimitive.Root>
  </ThreadPrimitive.Root>
);

function App() {
  const [session, setSession] = useState<Session | null>(null);
  useEffect(() => {
    let closed = false;
    let s: Session | undefined;
    connect({ url: params.get('server') ?? '', sessionId: params.get('session') ?? '' }).then((c) => {
      if (closed) return c.close();
      s = c;
      window.agentsyncSession = c;
      setSession(c);
    });
    return () => {
      closed = true;
      s?.close();
    };
  }, []);
  const runtime = useAgentsyncRuntime(session, {
    adapters,
    onSessionChange: (s) => {
      window.agentsyncSession = s;
    },
    onError: (err) => console.error('agentsync:', err),
  });
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <Thread />
    </AssistantRuntimeProvider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
