// Command wasm is the synccore client core compiled to one WebAssembly
// reactor module (ABI version 4). Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o wasm/module/agentsync.wasm ./wasm
//
// The host calls _initialize once, then only the agentsync_* exports below.
// Every byte result is packed in an i64 as (ptr<<32)|len and stays valid
// until the next export call; the host copies it out first.
//
// Errors: a result that is an Output (see synccore.Output) carries a typed
// error. agentsync_view, agentsync_message and agentsync_digest also answer
// with an Output holding the error (a msgpack map with "commands" and
// "error") when the handle is unknown (bad_request) or the client is broken
// (core_broken); a host tells it apart from a View, a Message or the ASCII
// hex digest by its "error" key (the digest: by a first byte that is a
// msgpack map, never an ASCII hex digit).
//
// Every export recovers panics: a panic marks the client broken, and every
// later call on it returns the same core_broken error, so a host discards it
// and rebuilds (new client, start, snapshot) without losing anything. The
// code core_broken is reserved for that: a server's error frame with code
// internal reaches the host as internal and leaves the client healthy.
// See docs/protocol.md §7.
package main

import (
	"bytes"
	"unsafe"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// abiVersion is the ABI this module implements; hosts refuse another.
// Version 2 added agentsync_changes (incremental render); version 3
// agentsync_handle_changes (an event and its changes in one call); version
// 4 agentsync_handle_compact (a delta's take in the result's 64 bits) and
// an alloc buffer that stays valid until the next alloc.
const abiVersion = 4

// slot is one entry of the handle table. broken is set by a recovered
// panic; a broken client is never called again.
type slot struct {
	client *synccore.Client
	broken *synccore.Error
}

var (
	// clients maps handles to clients. It is only indexed, never iterated,
	// so its order cannot leak into any output.
	clients = map[int32]*slot{}
	// nextHandle grows forever: a freed handle is never reused, so a host
	// holding a stale handle gets bad_request rather than another client.
	nextHandle int32

	// input is the buffer handed out by agentsync_alloc. Referencing it from
	// a global keeps it alive (Go heap objects never move), so the host can
	// write into it, input after input, until it asks for another.
	input []byte
	// result keeps the last result alive until the next export call.
	result []byte
	// handleOut is the reused buffer of agentsync_handle's results: a
	// delta then allocates nothing in the module (garbage collection is
	// dear in WebAssembly). It is only rewritten by the next handle call,
	// after the host copied the previous result out.
	handleOut []byte
	// changesOut is agentsync_changes' reused result buffer, for the same
	// reason; one that a whole long message made large is let go (gc.go).
	changesOut []byte

	// lastHandle and lastSlot remember the last client looked up: a host
	// calls one client over and over, and a map lookup per delta shows.
	lastHandle int32
	lastSlot   *slot
)

// largeInput is the size past which the alloc buffer is replaced by a
// smaller one at the next input that fits in it.
const largeInput = 1 << 20

func main() {}

//go:wasmexport agentsync_abi_version
func abiVersionExport() int32 { return abiVersion }

//go:wasmexport agentsync_alloc
func alloc(size int32) (ptr int32) {
	defer func() {
		// An allocation that fails (out of memory) is reported as pointer 0;
		// the host then gives up on this instance.
		if recover() != nil {
			input, ptr = nil, 0
		}
	}()
	if size < 0 {
		return 0
	}
	// Reuse the buffer when it is big enough: a stream of small frames then
	// allocates nothing. The core copies what it keeps out of its input. A
	// large buffer (a long page) is let go at the next small input, which
	// every host asks for (docs/protocol.md §7.2), so it is not pinned.
	if int(size) > cap(input) || cap(input) == 0 || cap(input) > largeInput && int(size) <= largeInput {
		input = make([]byte, size, max(int(size), 4096))
	}
	input = input[:size]
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(input[:1]))))
}

//go:wasmexport agentsync_client_new
func clientNew() (h int32) {
	defer func() {
		if recover() != nil {
			h = 0
		}
	}()
	nextHandle++
	clients[nextHandle] = &slot{client: synccore.NewClient(synccore.Options{})}
	return nextHandle
}

//go:wasmexport agentsync_client_free
func clientFree(h int32) {
	defer func() { _ = recover() }()
	delete(clients, h)
	if h == lastHandle {
		lastHandle, lastSlot = 0, nil
	}
}

//go:wasmexport agentsync_handle
func handle(h, ptr, n int32) int64 {
	return guarded("agentsync_handle", h, ptr, n, func(s *slot, in []byte) int64 {
		handleOut = wire.AppendHandleBytes(s.client, handleOut[:0], in)
		s.checkRecovered(handleOut)
		return out(handleOut)
	})
}

// agentsync_handle_changes handles an event and takes the changes in the
// same call (synccore.Client.AppendHandleChanges): one crossing per
// WebSocket message instead of two, and the commonest take in the flat
// appends form. It reuses handle's buffer.
//
//go:wasmexport agentsync_handle_changes
func handleChanges(h, ptr, n int32) int64 {
	return guarded("agentsync_handle_changes", h, ptr, n, func(s *slot, in []byte) int64 {
		var outLen int
		handleOut, outLen = wire.AppendHandleChanges(s.client, handleOut[:0], in)
		s.checkRecovered(handleOut[:outLen])
		return out(handleOut)
	})
}

// agentsync_handle_compact is agentsync_handle_changes that may answer a
// delta's take in the result itself (synccore.Client.AppendHandleCompact):
// its pointer half 0 and its length half the compact append, no bytes.
//
//go:wasmexport agentsync_handle_compact
func handleCompact(h, ptr, n int32) int64 {
	return guarded("agentsync_handle_compact", h, ptr, n, func(s *slot, in []byte) int64 {
		var outLen int
		var compact uint32
		handleOut, outLen, compact = wire.AppendHandleCompact(s.client, handleOut[:0], in)
		if compact != 0 {
			result = nil
			return int64(compact)
		}
		s.checkRecovered(handleOut[:outLen])
		return out(handleOut)
	})
}

//go:wasmexport agentsync_view
func view(h int32) int64 {
	return guarded("agentsync_view", h, 0, 0, func(s *slot, _ []byte) int64 { return out(wire.ViewBytes(s.client)) })
}

//go:wasmexport agentsync_message
func message(h, ptr, n int32) int64 {
	// An absent message is a result of length 0.
	return guarded("agentsync_message", h, ptr, n, func(s *slot, in []byte) int64 { return out(wire.MessageBytes(s.client, string(in))) })
}

//go:wasmexport agentsync_changes
func changes(h int32) int64 {
	return guarded("agentsync_changes", h, 0, 0, func(s *slot, _ []byte) int64 {
		changesOut = wire.AppendChangesBytes(s.client, changesOut[:0])
		return out(changesOut)
	})
}

//go:wasmexport agentsync_digest
func digest(h int32) int64 {
	return guarded("agentsync_digest", h, 0, 0, func(s *slot, _ []byte) int64 {
		estimate = checkEvery // a digest reads the whole view: check after it
		return out([]byte(s.client.Digest()))
	})
}

// guarded runs fn on the live client h with the n input bytes the host
// wrote at ptr and returns its packed result (out). An unknown or broken
// handle and an input outside the alloc buffer answer an Output error; a
// panic in fn breaks the client and answers its core_broken error.
func guarded(export string, h, ptr, n int32, fn func(s *slot, in []byte) int64) (packed int64) {
	s, errOut := lookup(h)
	if errOut != nil {
		return out(errOut)
	}
	in, err := inputBytes(ptr, n)
	if err != nil {
		return out(errorOutput(err))
	}
	defer func() {
		if v := recover(); v != nil {
			packed = out(errorOutput(s.breakOn(export, v)))
		}
		collectIfDue(len(in) + len(result))
	}()
	return fn(s, in)
}

// lookup finds a live client, or returns the encoded Output error the host
// gets instead: bad_request for an unknown handle, the recorded core_broken
// error for a broken client.
func lookup(h int32) (*slot, []byte) {
	s := lastSlot
	if h != lastHandle || s == nil {
		var ok bool
		if s, ok = clients[h]; !ok {
			return nil, errorOutput(synccore.Errorf(synccore.CodeBadRequest, "unknown client handle %d", h))
		}
		lastHandle, lastSlot = h, s
	}
	if s.broken != nil {
		return nil, errorOutput(s.broken)
	}
	return s, nil
}

// breakOn records a recovered panic: the client's state may be torn, so it
// is never used again.
func (s *slot) breakOn(export string, v any) *synccore.Error {
	s.broken = synccore.Errorf(synccore.CodeCoreBroken, "%s: panic: %v", export, v)
	return s.broken
}

// brokenCode is how synccore.Client.AppendHandleBytes reports a panic it
// recovered itself (code core_broken): the client's state may be torn all
// the same, so the slot breaks as if the panic had reached this module's
// recover, and later calls answer the same error.
var brokenCode = []byte(synccore.CodeCoreBroken)

// checkRecovered breaks the slot when res reports a panic the core
// recovered. Only an Output with an error (a map of two keys) that holds
// the code's bytes is decoded, so a delta's Output costs one byte compare.
func (s *slot) checkRecovered(res []byte) {
	if len(res) == 0 || res[0] != 0x82 || !bytes.Contains(res, brokenCode) {
		return
	}
	o, err := wire.DecodeOutput(res)
	if err == nil && o.Error != nil && o.Error.Code == synccore.CodeCoreBroken {
		s.broken = o.Error
	}
}

// inputBytes returns the n bytes the host wrote at ptr. They must lie inside
// the buffer of the last agentsync_alloc: any other range is the host's bug
// and is refused rather than read from arbitrary memory.
func inputBytes(ptr, n int32) ([]byte, *synccore.Error) {
	if n == 0 {
		return nil, nil
	}
	if n < 0 || cap(input) == 0 {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "input %d bytes at %d outside the alloc buffer", n, ptr)
	}
	base := int64(uintptr(unsafe.Pointer(unsafe.SliceData(input[:1]))))
	off := int64(ptr) - base
	if off < 0 || off+int64(n) > int64(len(input)) {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "input %d bytes at %d outside the alloc buffer", n, ptr)
	}
	return input[off : off+int64(n)], nil
}

// errorOutput encodes an Output that carries only err.
func errorOutput(err *synccore.Error) []byte {
	return wire.EncodeOutput(synccore.Output{Commands: []synccore.Command{}, Error: err})
}

// out keeps b alive until the next export call and packs its address and
// length. An empty result is 0 (pointer and length 0).
func out(b []byte) int64 {
	result = b
	if len(b) == 0 {
		return 0
	}
	ptr := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	return int64(ptr)<<32 | int64(uint32(len(b)))
}
