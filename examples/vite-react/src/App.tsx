import { useState } from 'react';
import { createSession, type Session } from '@agentsync/client';
import { Chat } from './Chat';

declare global {
  interface Window {
    /** For the browser test: the live session (to drop its connection). */
    agentsyncSession?: Session;
  }
}

export function App({ server }: { server: string }) {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState('');

  async function start() {
    try {
      const s = await createSession(server);
      window.agentsyncSession = s;
      setSession(s);
    } catch (err) {
      setError(String(err));
    }
  }

  return (
    <main>
      <h1>agentsync</h1>
      {!session && (
        <button id="new-session" onClick={start}>
          New session
        </button>
      )}
      {error && <p id="error">{error}</p>}
      {session && <Chat session={session} />}
    </main>
  );
}
