import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Two pages: the assistant-ui Thread (index.html) and a useChat app on
// AgentsyncChatTransport (usechat.html).
export default defineConfig({
  plugins: [react()],
  build: { rollupOptions: { input: { main: 'index.html', usechat: 'usechat.html' } } },
});
