// The Node entry of @agentsync/client (chosen by the "node" condition of
// package.json's exports): the browser entry plus what only Node can do,
// reading the module from a file. Browsers and bundlers never load this file.

import { access, readFile } from 'node:fs/promises';
import { useFileLoader } from './load.js';

useFileLoader({
  read: async (file) => new Uint8Array(await readFile(file)),
  defaultSource: defaultNodeSource,
});

// agentsync.wasm next to the package files (the npm tarball holds it), or,
// in a checkout of the repository where it is not copied, the committed
// module under wasm/module.
async function defaultNodeSource() {
  const packaged = new URL('./agentsync.wasm', import.meta.url);
  try {
    await access(packaged);
    return packaged;
  } catch {
    return new URL('../wasm/module/agentsync.wasm', import.meta.url);
  }
}

export * from './index.js';
