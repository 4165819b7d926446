package core

import (
	"bytes"
	"context"
	"sync"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/tetratelabs/wazero/api"
)

// WasmCore is one client core running in its own instance of the
// WebAssembly module under wazero. Calls are serialised by a mutex (an
// instance is not goroutine-safe).
//
// After a trap or a core_broken error (a panic the module recovered) the
// instance is discarded at once and every call fails with that error until
// Reset builds a new instance. Any other error, internal included (a
// server's error frame), leaves the instance in use.
type WasmCore struct {
	mu     sync.Mutex
	rt     *Runtime
	inst   *instance
	h      int32
	broken error
	closed bool

	// hdr holds a frames event's header; in, the pieces of an event's input.
	hdr []byte
	in  [2][]byte

	// compactID is the message of the last take when a compact answer may
	// continue it (§7.4.2: one append to that message), "" when none;
	// compactHead, that take's scalars, which a compact answer repeats.
	compactID   string
	compactHead synccore.Changes
	compacts    int // compact answers taken (tests)
}

var (
	_ Core     = (*WasmCore)(nil)
	_ Resetter = (*WasmCore)(nil)
)

// NewWasmCore starts a new instance of rt's module with one idle client.
func NewWasmCore(ctx context.Context, rt *Runtime) (*WasmCore, error) {
	w := &WasmCore{rt: rt}
	if err := w.start(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// start builds a new instance and a client in it.
func (w *WasmCore) start(ctx context.Context) error {
	inst, err := w.rt.instantiate(ctx)
	if err != nil {
		return err
	}
	res, err := inst.call(ctx, inst.clientNew)
	if err != nil {
		_ = inst.close(ctx)
		return err
	}
	h := api.DecodeI32(res)
	if h <= 0 {
		_ = inst.close(ctx)
		return synccore.Errorf(synccore.CodeCoreBroken, "agentsync_client_new returned handle %d", h)
	}
	w.inst, w.h, w.broken, w.compactID = inst, h, nil, ""
	return nil
}

// Reset implements Resetter: the old instance (broken or not) is dropped and
// a new one started, with a fresh idle client.
func (w *WasmCore) Reset(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errClosed
	}
	w.discard()
	return w.start(ctx)
}

// Close implements Core.
func (w *WasmCore) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.discard()
	return nil
}

// discard closes the instance; the next call needs Reset.
func (w *WasmCore) discard() {
	if w.inst != nil {
		_ = w.inst.close(context.Background())
		w.inst = nil
	}
}

// usable returns why the core cannot be called, if it cannot.
func (w *WasmCore) usable() error {
	switch {
	case w.closed:
		return errClosed
	case w.broken != nil:
		return w.broken
	case w.inst == nil:
		return brokenf("wasm core has no instance")
	}
	return nil
}

// fail records a broken core: the instance is discarded (after a trap its
// state is undefined; after a recovered panic the client is broken). Other
// errors pass through.
func (w *WasmCore) fail(err error) error {
	if isBroken(err) {
		w.broken = err
		w.discard()
	}
	return err
}

// moduleError is the error of an Output the module answered. Its code
// alone decides (ABI v1 to v3): core_broken breaks the core, anything else is an
// error the core merely reports (internal from a server's error frame,
// bad_request for an unknown handle) and leaves it usable.
func (w *WasmCore) moduleError(err *synccore.Error) error {
	if err.Code == synccore.CodeCoreBroken {
		return w.fail(broken(err))
	}
	return err
}

// Handle implements Core.
func (w *WasmCore) Handle(ev synccore.Event) ([]synccore.Command, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	b, err := w.callInput(w.inst.handle, w.eventInput(&ev)...)
	if err != nil {
		return nil, w.fail(err)
	}
	out, err := wire.DecodeOutput(b)
	if err != nil {
		return nil, w.fail(brokenf("decode wasm output: %v", err))
	}
	if out.Error != nil {
		return out.Commands, w.moduleError(out.Error)
	}
	return out.Commands, nil
}

// HandleChanges implements Core: the frames go in as Handle's do, and one
// call answers the Output and the changes (wire.DecodeHandleChanges).
// The call is agentsync_handle_compact: a delta that continues the part
// the previous take appended to comes back in the result's 64 bits, and
// its Changes is built here from that take's, with no bytes read.
func (w *WasmCore) HandleChanges(ev synccore.Event) ([]synccore.Command, *synccore.Changes, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, nil, err
	}
	in := w.eventInput(&ev)
	packed, err := w.callPacked(w.inst.handleCompact, in...)
	if err != nil {
		return nil, nil, w.fail(err)
	}
	if packed>>32 == 0 && uint32(packed) != 0 {
		ch, err := w.compactChanges(uint32(packed), in)
		if err != nil {
			return nil, nil, w.fail(err)
		}
		w.compacts++
		return nil, ch, nil
	}
	w.compactID = "" // any other take ends what a compact answer continues
	b, err := w.inst.result(packed)
	if err != nil {
		return nil, nil, w.fail(err)
	}
	hc, err := wire.DecodeHandleChanges(b)
	if err != nil {
		return nil, nil, w.fail(brokenf("decode wasm handle_changes: %v", err))
	}
	if hc.CompactBase() {
		w.compactID, w.compactHead = hc.Changes.Messages[0].MessageID, *hc.Changes
		w.compactHead.Messages = nil
	}
	var cmds []synccore.Command
	if out := hc.Output; out != nil {
		cmds = out.Commands
		if out.Error != nil {
			return cmds, hc.Changes, w.moduleError(out.Error)
		}
	}
	return cmds, hc.Changes, nil
}

// compactChanges is the take a compact answer v stands for: the text from
// its offset in the event (the pieces in) to the end, appended to part
// v>>16 of the message the previous take appended to; the scalars are
// that take's. A compact answer without such a take is the module's bug.
func (w *WasmCore) compactChanges(v uint32, in [][]byte) (*synccore.Changes, error) {
	if w.compactID == "" {
		return nil, brokenf("wasm compact answer without a previous append")
	}
	part, at := wire.SplitCompactAppend(v)
	for _, p := range in[:len(in)-1] {
		at -= len(p)
	}
	last := in[len(in)-1]
	if at < 0 || at > len(last) {
		return nil, brokenf("wasm compact answer's text at %d outside the event", at)
	}
	ch := w.compactHead
	ch.Messages = []synccore.MessageChange{{MessageID: w.compactID,
		Appends: []synccore.TextAppend{{Index: part, Text: string(last[at:])}}}}
	return &ch, nil
}

// eventInput is ev's encoding as the pieces callInput writes: for plain
// frames (the hot path) a hand-made header and the frame bytes as they
// are, with no host-side copy.
func (w *WasmCore) eventInput(ev *synccore.Event) [][]byte {
	if isPlainFrames(ev) {
		w.hdr = appendFramesEventHeader(w.hdr[:0], len(ev.Data))
		w.in[0], w.in[1] = w.hdr, ev.Data
		return w.in[:]
	}
	w.in[0] = wire.EncodeEvent(*ev)
	return w.in[:1]
}

// answerError is the Output error the module answers instead of a view,
// message, changes or digest for a broken or unknown client: an Output map
// of two keys, "commands" first, then "error". A view, message or changes
// map starts with another key, and a digest is hex, so nothing else is
// decoded twice.
func answerError(b []byte) *synccore.Error {
	const errorOutputPrefix = "\x82\xa8commands"
	if len(b) < len(errorOutputPrefix) || string(b[:len(errorOutputPrefix)]) != errorOutputPrefix {
		return nil
	}
	out, err := wire.DecodeOutput(b)
	if err != nil {
		return nil
	}
	return out.Error
}

// View implements Core.
func (w *WasmCore) View() (synccore.View, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return synccore.View{}, err
	}
	b, err := w.call(w.inst.view)
	if err != nil {
		return synccore.View{}, w.fail(err)
	}
	if e := answerError(b); e != nil {
		return synccore.View{}, w.moduleError(e)
	}
	v, err := wire.DecodeView(b)
	if err != nil {
		return synccore.View{}, w.fail(brokenf("decode wasm view: %v", err))
	}
	return v, nil
}

// Message implements Core.
func (w *WasmCore) Message(id string) (synccore.Message, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return synccore.Message{}, false, err
	}
	b, err := w.callInput(w.inst.message, []byte(id))
	if err != nil {
		return synccore.Message{}, false, w.fail(err)
	}
	if len(b) == 0 {
		return synccore.Message{}, false, nil
	}
	if e := answerError(b); e != nil {
		return synccore.Message{}, false, w.moduleError(e)
	}
	m, err := wire.DecodeMessage(b)
	if err != nil {
		return synccore.Message{}, false, w.fail(brokenf("decode wasm message: %v", err))
	}
	return m, true, nil
}

// Changes implements Core.
func (w *WasmCore) Changes() (synccore.Changes, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return synccore.Changes{}, err
	}
	w.compactID = "" // a take the module answers compact appends after no more
	b, err := w.call(w.inst.changes)
	if err != nil {
		return synccore.Changes{}, w.fail(err)
	}
	if e := answerError(b); e != nil {
		return synccore.Changes{}, w.moduleError(e)
	}
	ch, err := wire.DecodeChanges(b)
	if err != nil {
		return synccore.Changes{}, w.fail(brokenf("decode wasm changes: %v", err))
	}
	return ch, nil
}

// Digest implements Core.
func (w *WasmCore) Digest() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return "", err
	}
	b, err := w.call(w.inst.dig)
	if err != nil {
		return "", w.fail(err)
	}
	// A digest is ASCII hex; a msgpack map means an Output error.
	if e := answerError(b); e != nil {
		return "", w.moduleError(e)
	}
	if len(b) != 64 {
		return "", w.fail(brokenf("wasm digest is neither hex nor an error"))
	}
	return string(b), nil
}

// call runs an export that takes the client handle and returns bytes.
func (w *WasmCore) call(fn api.Function) ([]byte, error) {
	ctx := context.Background()
	res, err := w.inst.call(ctx, fn, api.EncodeI32(w.h))
	if err != nil {
		return nil, err
	}
	return w.inst.result(res)
}

// callInput writes in (the concatenation of its pieces) to the module and
// runs an export taking (handle, ptr, len).
func (w *WasmCore) callInput(fn api.Function, in ...[]byte) ([]byte, error) {
	res, err := w.callPacked(fn, in...)
	if err != nil {
		return nil, err
	}
	return w.inst.result(res)
}

// callPacked is callInput's call, its packed result as the module gave it.
func (w *WasmCore) callPacked(fn api.Function, in ...[]byte) (uint64, error) {
	ctx := context.Background()
	ptr, n, err := w.inst.write(ctx, in...)
	if err != nil {
		return 0, err
	}
	return w.inst.call(ctx, fn, api.EncodeI32(w.h), api.EncodeU32(ptr), api.EncodeU32(n))
}

// handleRaw feeds event bytes as they are to the module and returns a copy
// of the Output bytes: the byte-level path the conformance tests compare
// with the native core.
func (w *WasmCore) handleRaw(event []byte) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	b, err := w.callInput(w.inst.handle, event)
	if err != nil {
		return nil, w.fail(err)
	}
	return bytes.Clone(b), nil
}
