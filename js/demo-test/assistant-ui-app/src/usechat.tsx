// A useChat app (@ai-sdk/react) on AgentsyncChatTransport:
// ?server=URL&session=ID. The history comes from loadUIMessages (through
// the transport, which remembers its ids), and a reply still streaming
// when the page loaded is resumed (resumeStream).
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import type { UIMessage } from 'ai';
import { connect, type Session } from '@agentsync/client';
import { AgentsyncChatTransport } from '@agentsync/client/ai';

declare global {
  interface Window {
    agentsyncSession?: Session;
    chatStatus?: string;
  }
}

const params = new URLSearchParams(location.search);

function Chat({ transport, initial }: { transport: AgentsyncChatTransport; initial: UIMessage[] }) {
  // transport.chatId, not transport.session.sessionId: a regenerate moves
  // the transport to a fork, and a new id would make useChat start a new
  // Chat from `initial` (docs/ai-sdk.md).
  const { messages, sendMessage, stop, regenerate, resumeStream, status, error } = useChat({
    id: transport.chatId,
    transport,
    messages: initial,
  });
  const [draft, setDraft] = useState('');
  useEffect(() => {
    window.chatStatus = status;
  }, [status]);
  useEffect(() => {
    resumeStream().catch((err) => console.error('resume:', err));
    // Once, on load.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <div>
      <div id="messages" data-status={status}>
        {messages.map((m) => (
          <div key={m.id} className="msg" data-role={m.role} data-id={m.id}>
            {m.parts.map((p, i) => (p.type === 'text' ? <p key={i} className="part" data-type="text">{p.text}</p> : null))}
          </div>
        ))}
      </div>
      {error && <p id="error">{String(error)}</p>}
      <input id="draft" value={draft} onChange={(e) => setDraft(e.target.value)} />
      <button
        id="send"
        onClick={() => {
          sendMessage({ text: draft });
          setDraft('');
        }}
      >
        Send
      </button>
      <button id="stop" onClick={() => stop()}>Stop</button>
      <button id="regenerate" onClick={() => regenerate()}>Regenerate</button>
    </div>
  );
}

function App() {
  const [ready, setReady] = useState<{ transport: AgentsyncChatTransport; initial: UIMessage[] } | null>(null);
  useEffect(() => {
    let closed = false;
    let t: AgentsyncChatTransport | undefined;
    (async () => {
      const session = await connect({ url: params.get('server') ?? '', sessionId: params.get('session') ?? '' });
      if (closed) return session.close();
      t = new AgentsyncChatTransport({ session, onSessionChange: (s) => (window.agentsyncSession = s) });
      window.agentsyncSession = session;
      const page = await t.loadMessages({ limit: 200 });
      if (!closed) setReady({ transport: t, initial: page.messages as UIMessage[] });
    })().catch((err) => console.error('agentsync:', err));
    return () => {
      closed = true;
      t?.session.close();
    };
  }, []);
  return ready ? <Chat transport={ready.transport} initial={ready.initial} /> : <p id="loading">loading</p>;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
