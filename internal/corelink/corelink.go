// Package corelink carries synccore's byte-level entry points (its codec,
// digest and the module's ABI calls on a Client) to internal/wire, the one
// package that exports them to this module's server, Go host and wasm
// module, without making them part of synccore's public API.
//
// synccore cannot import internal/wire (wire names synccore's types), so
// synccore fills Core in its init with a value whose methods wire's
// interface names; wire asserts it once when it is initialised, after
// synccore (Go initialises an imported package first). Nothing else writes
// Core.
package corelink

// Core is synccore's implementation of internal/wire's core interface.
var Core any
