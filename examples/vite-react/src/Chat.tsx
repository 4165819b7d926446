import { memo, useState, type FormEvent } from 'react';
import type { Message, Session } from '@agentsync/client';
import { useSession } from '@agentsync/client/react';
import { PartView } from './PartView';
import { countRender } from './renders';

type Answer = ReturnType<typeof useSession>['answer'];

export function Chat({ session }: { session: Session }) {
  const { view, status, send, stop, answer } = useSession(session);
  const [draft, setDraft] = useState('');

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!draft.trim()) return;
    void send(draft);
    setDraft('');
  }

  return (
    <section data-session-id={view.session_id}>
      <p>
        status <span id="status">{status}</span> · {view.total} messages
      </p>
      <ol id="messages">
        {view.messages.map((m) => (
          <MessageRow key={m.message_id} message={m} answer={answer} />
        ))}
      </ol>
      <form onSubmit={submit}>
        <input id="draft" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="scenario:help" />
        <button id="send" type="submit">
          Send
        </button>
        <button type="button" onClick={() => void stop()}>
          Stop
        </button>
      </form>
    </section>
  );
}

// Memoized on the message object: an unchanged message keeps its identity
// from one view to the next, so its row does not render again.
const MessageRow = memo(function MessageRow({ message, answer }: { message: Message; answer: Answer }) {
  countRender(message.message_id);
  return (
    <li className="message" data-message-id={message.message_id} data-role={message.role} data-state={message.state ?? ''}>
      <strong>{message.role}</strong>
      {message.parts.map((p) => (
        <PartView key={p.part_id} part={p} answer={answer} />
      ))}
    </li>
  );
});
