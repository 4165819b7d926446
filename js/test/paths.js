// Paths of the repository the tests use.

import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const jsDir = fileURLToPath(new URL('..', import.meta.url));
export const repoDir = path.resolve(jsDir, '..');
export const wasmPath = process.env.AGENTSYNC_WASM ?? path.join(repoDir, 'wasm', 'module', 'agentsync.wasm');
export const tracesDir = path.join(repoDir, 'testdata', 'traces');
export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
