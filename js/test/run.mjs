// npm test: builds the reference server once for the whole run and hands
// its path to every test file (AGENTSYNC_SERVER_BIN, read by
// harness/syncserver.js), then runs node with the arguments given. Each
// file is a process of its own, so without this each built the 140 MB
// binary again: about 4.6 s of linking per file.
// A file run alone (node --test test/x.test.js) still builds its own.

import { spawn } from 'node:child_process';
import { buildServer } from './harness/syncserver.js';

const bin = await buildServer();
const child = spawn(process.execPath, process.argv.slice(2), {
  stdio: 'inherit',
  env: { ...process.env, AGENTSYNC_SERVER_BIN: bin },
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
