import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// No agentsync-specific option: the package's `new URL('./agentsync.wasm',
// import.meta.url)` is enough for `vite build` to ship the module.
export default defineConfig({
  plugins: [react()],
});
