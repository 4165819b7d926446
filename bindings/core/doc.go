// Package core is the Go host's base client: the synccore state machine
// behind a small API (Core), run either as the WebAssembly module every
// host shares, under wazero (Runtime compiles it once; each WasmCore is
// one instance), or natively (NativeCore, the same synccore code, for
// speed or debugging). A core does no I/O: it takes events and answers
// commands, the view and its changes.
//
// Package bindings is the application's client on top of it: it owns the
// WebSocket and the HTTP reads a core asks for, and recovers a core that
// broke. An application picks a core here only to change the default
// (bindings.Config.Core, bindings.Config.Runtime).
package core
