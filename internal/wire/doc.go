// Package wire is the byte level of the protocol for this module's own
// server, Go host and WebAssembly module: the msgpack codec of every shape
// (frames, pages, messages, parts, events, outputs, views, changes), the
// view digest, the error table (codes and HTTP statuses), and the calls
// the module's ABI makes on a synccore.Client (docs/protocol.md §7).
//
// The codec itself is synccore's (the state machine decodes frames with
// it); wire reaches it through internal/corelink, so that synccore's
// public API stays the model, Client, Mirror and MessageList.
package wire
