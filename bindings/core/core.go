package core

import (
	"context"
	"errors"
	"sync"

	"github.com/agentsync/agentsync/synccore"
)

// Core is one client core: the synccore state machine behind a small API.
// Implementations serialise calls themselves, so a Core may be shared by
// goroutines, but the Client is its only intended caller.
type Core interface {
	// Handle applies one event and returns the commands for the host (also
	// with an error: a bad frame still asks for a resync). A rejected event
	// returns a typed *synccore.Error; an error with code core_broken (it
	// also matches ErrBroken) means the core failed and must be Reset (or
	// dropped). Any other code, internal included, leaves the core usable.
	Handle(ev synccore.Event) ([]synccore.Command, error)
	// View returns the current view, owned by the caller.
	View() (synccore.View, error)
	// Message returns one message of the view by id; false if absent.
	Message(id string) (synccore.Message, bool, error)
	// Changes returns what changed in the view since the previous call
	// (synccore.Client.TakeChanges): the incremental render a host patches
	// its copy of the view with, at a cost that follows the change, not
	// the view's size. The first call is a Reset with every message.
	Changes() (synccore.Changes, error)
	// HandleChanges is Handle, then Changes, in one call (one crossing
	// into the module per WebSocket message: ABI v4's
	// agentsync_handle_compact, whose compact answers the WasmCore turns
	// into the Changes they stand for). The changes are nil when the event
	// broke the core.
	HandleChanges(ev synccore.Event) ([]synccore.Command, *synccore.Changes, error)
	// Digest is the hex SHA-256 of the view's messages (wire.DigestMessages).
	Digest() (string, error)
	// Close releases the core; later calls return a closed error.
	Close() error
}

// Resetter is implemented by cores that can be rebuilt in place after they
// broke (ErrBroken): Reset drops the old state (and, for a WasmCore, the
// instance) and leaves a fresh, idle core. The Client uses it to recover.
type Resetter interface {
	Reset(ctx context.Context) error
}

// NativeCore runs synccore.Client directly in Go: the reference behaviour,
// about twenty times faster than the WebAssembly core.
type NativeCore struct {
	mu     sync.Mutex
	c      *synccore.Client
	broken error
	// testPanic, when set by a test, runs inside every guarded call: it
	// forces a real panic through the recover path. Nil in production.
	testPanic func(op string)
}

var (
	_ Core     = (*NativeCore)(nil)
	_ Resetter = (*NativeCore)(nil)
)

// NewNativeCore returns an idle native core.
func NewNativeCore() *NativeCore {
	return &NativeCore{c: synccore.NewClient(synccore.Options{})}
}

// Handle implements Core. A panic in the core is recovered into a
// core_broken error that breaks the core until Reset, like the WebAssembly
// module does.
func (n *NativeCore) Handle(ev synccore.Event) (cmds []synccore.Command, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.usable(); err != nil {
		return nil, err
	}
	defer n.recoverInto("handle", &err)
	n.guarded("handle")
	return n.c.Handle(ev)
}

// View implements Core.
func (n *NativeCore) View() (v synccore.View, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.usable(); err != nil {
		return v, err
	}
	defer n.recoverInto("view", &err)
	n.guarded("view")
	return n.c.View(), nil
}

// Message implements Core.
func (n *NativeCore) Message(id string) (m synccore.Message, ok bool, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.usable(); err != nil {
		return m, false, err
	}
	defer n.recoverInto("message", &err)
	n.guarded("message")
	m, ok = n.c.Message(id)
	return m, ok, nil
}

// Changes implements Core.
func (n *NativeCore) Changes() (ch synccore.Changes, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.usable(); err != nil {
		return ch, err
	}
	defer n.recoverInto("changes", &err)
	n.guarded("changes")
	return n.c.TakeChanges(), nil
}

// HandleChanges implements Core.
func (n *NativeCore) HandleChanges(ev synccore.Event) (cmds []synccore.Command, ch *synccore.Changes, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.usable(); err != nil {
		return nil, nil, err
	}
	defer n.recoverInto("handle", &err)
	n.guarded("handle")
	cmds, err = n.c.Handle(ev)
	taken := n.c.TakeChanges()
	return cmds, &taken, err
}

// Digest implements Core.
func (n *NativeCore) Digest() (d string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.usable(); err != nil {
		return "", err
	}
	defer n.recoverInto("digest", &err)
	n.guarded("digest")
	return n.c.Digest(), nil
}

// Reset implements Resetter: a fresh idle client replaces the old one.
func (n *NativeCore) Reset(context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.c == nil {
		return errClosed
	}
	n.c, n.broken = synccore.NewClient(synccore.Options{}), nil
	return nil
}

// Close implements Core.
func (n *NativeCore) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.c = nil
	return nil
}

func (n *NativeCore) usable() error {
	if n.c == nil {
		return errClosed
	}
	return n.broken
}

// guarded runs the test hook, if any, under recoverInto.
func (n *NativeCore) guarded(op string) {
	if n.testPanic != nil {
		n.testPanic(op)
	}
}

// recoverInto turns a panic into the core_broken error that breaks the core.
func (n *NativeCore) recoverInto(op string, err *error) {
	if v := recover(); v != nil {
		n.broken = brokenf("native core %s: panic: %v", op, v)
		*err = n.broken
	}
}

// errClosed is returned by a core used after Close.
var errClosed = synccore.Errorf(synccore.CodeClosed, "closed")

// ErrBroken is matched (errors.Is) by the errors of a core that failed and
// must be Reset before it is used again: a trap, or a panic the core
// recovered from. Such an error is also a *synccore.Error with code
// core_broken, and only such an error is: every other code (internal from
// a server's error frame included) leaves the core usable.
var ErrBroken = errors.New("bindings: the core is broken")

// ErrMemoryLimit is matched, beside ErrBroken, by the error of a
// WebAssembly core whose module failed to grow its memory past the limit
// (RuntimeConfig.MemoryLimitPages): the Client rebuilds it like any broken
// core, from a new instance with fresh memory.
var ErrMemoryLimit = errors.New("bindings: the module reached its memory limit")

// brokenError is a broken core's typed error; cause, if set, is another
// sentinel it matches (ErrMemoryLimit).
type brokenError struct {
	err   *synccore.Error
	cause error
}

func (e *brokenError) Error() string { return e.err.Error() }
func (e *brokenError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.err, ErrBroken, e.cause}
	}
	return []error{e.err, ErrBroken}
}

// broken wraps err, whose code is core_broken, so it also matches ErrBroken.
func broken(err *synccore.Error) error { return &brokenError{err: err} }

// brokenf is a new core_broken error: a trap, a recovered panic, or a
// result of the module the host cannot read.
func brokenf(format string, args ...any) error {
	return broken(synccore.Errorf(synccore.CodeCoreBroken, format, args...))
}

// isBroken reports whether err means the core must be rebuilt: its code is
// core_broken, and nothing else is.
func isBroken(err error) bool {
	var e *synccore.Error
	return errors.As(err, &e) && e.Code == synccore.CodeCoreBroken
}
