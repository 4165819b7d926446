// Package corehook lets bindings' tests reach into a core.WasmCore (close
// its instance as a trap would, tell which instance it runs) without
// making that part of package core's API. Package core fills the hooks in
// its init; only tests call them.
package corehook

var (
	// KillInstance closes the instance of a *core.WasmCore under its
	// feet: its next call fails as after a trap.
	KillInstance func(wasmCore any)
	// InstanceOf is the instance a *core.WasmCore runs now (nil if none),
	// to compare across calls.
	InstanceOf func(wasmCore any) any
)
