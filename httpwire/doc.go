// Package httpwire declares the shapes of agentsync's HTTP API
// (docs/protocol.md §3) once: the reference server answers with them, the
// Go host (bindings) sends and decodes them, and tools/genwire writes
// their TypeScript declarations into js/index.d.ts (`go generate ./js`).
// The messages, parts and pages themselves are synccore's model.
//
// Every shape encodes as msgpack (the Go host's format) and as JSON (a
// browser's), by the tags of its fields.
package httpwire
