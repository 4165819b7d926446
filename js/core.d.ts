// Declarations of @agentsync/client/core.js: one module instance, one client.
export { AgentsyncError, CORE_BROKEN, Command, Core, CoreEvent, loadModule, WasmSource } from './index.js';

/** The ABI version this host speaks. */
export declare const ABI_VERSION: 4;
/** agentsync.wasm next to the package's scripts. */
export declare function defaultWasmURL(): URL;
/** Where the module is loaded from when none is given (a file under the Node entry). */
export declare function defaultWasmSource(): Promise<string | URL>;
