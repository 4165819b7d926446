// Package module embeds the agentsync WebAssembly module (the synccore client
// core built from ../main.go), so Go users need no build step. The bindings
// run it under wazero; the server serves the same bytes to browsers.
//
// Rebuild it with `make wasm`; bindings' tests fail when it is stale.
package module

import _ "embed"

// Wasm is the module's bytes (ABI version 2). Do not modify it.
//
//go:embed agentsync.wasm
var Wasm []byte

// ABIVersion is the version agentsync_abi_version must return.
const ABIVersion = 4
