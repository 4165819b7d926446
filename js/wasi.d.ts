// Declarations of @agentsync/client/wasi.js: the WASI preview 1 shim made of web APIs.

/** Thrown by proc_exit: the module asked to stop. The instance is unusable after it. */
export declare class WasiExit extends Error {
  constructor(code: number);
  code: number;
}

export declare class Wasi {
  constructor(opts?: { stdout?: (line: string) => void; stderr?: (line: string) => void });
  /** Binds the shim to the instance's exported memory (after instantiation). */
  setMemory(memory: WebAssembly.Memory): void;
  /** The import object for a module: every wasi import it declares gets a function. */
  imports(module: WebAssembly.Module): WebAssembly.Imports;
}
