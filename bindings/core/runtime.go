package core

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/wasm/module"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// RuntimeConfig configures a Runtime. The zero value is usable.
type RuntimeConfig struct {
	// CacheDir keeps compiled code on disk so a later process starts in tens
	// of milliseconds instead of about a second. Empty means
	// os.UserCacheDir()/agentsync; "-" disables the disk cache.
	CacheDir string
	// MemoryLimitPages caps each instance's linear memory in 64 KiB pages
	// (0: wazero's default, 4 GiB). An instance that needs more traps, and
	// the Client rebuilds it.
	MemoryLimitPages uint32
	// Stderr receives what the module writes to stderr (the Go runtime's
	// fatal errors). Nil discards it.
	Stderr io.Writer
}

// Runtime compiles the embedded module once and makes instances of it. It
// is safe for concurrent use; each instance (a WasmCore) is not.
type Runtime struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	stderr   io.Writer

	// spare is the instance NewRuntime started to check the module, kept
	// for the first core: a process's first start pays one instance, not two.
	mu    sync.Mutex
	spare *instance

	// peakMemory is the largest linear memory any instance reached, bytes.
	peakMemory atomic.Uint64
	// limit is an instance's linear memory limit, bytes.
	limit uint64
}

// MaxMemoryBytes is the largest linear memory any instance of r reached:
// the module's memory never shrinks, so this is what a host pays for it.
func (r *Runtime) MaxMemoryBytes() uint64 { return r.peakMemory.Load() }

// NewRuntime compiles the module (or loads it from the compilation cache)
// and checks its ABI version by starting one instance.
func NewRuntime(ctx context.Context, cfg RuntimeConfig) (*Runtime, error) {
	rc := wazero.NewRuntimeConfig() // the compiler where wazero has one, else its interpreter
	if cfg.MemoryLimitPages > 0 {
		rc = rc.WithMemoryLimitPages(cfg.MemoryLimitPages)
	}
	if dir := cacheDir(cfg.CacheDir); dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return nil, fmt.Errorf("bindings: compilation cache in %s: %w", dir, err)
		}
		rc = rc.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("bindings: instantiate WASI: %w", err)
	}
	compiled, err := rt.CompileModule(ctx, module.Wasm)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("bindings: compile agentsync.wasm: %w", err)
	}
	r := &Runtime{rt: rt, compiled: compiled, stderr: cfg.Stderr, limit: uint64(cfg.MemoryLimitPages) << 16}
	if r.limit == 0 {
		r.limit = 1 << 32 // wasm32's 4 GiB, wazero's default
	}
	if r.stderr == nil {
		r.stderr = io.Discard
	}
	// One instance proves the module starts and speaks our ABI, so a wrong
	// module fails here rather than on the first event.
	inst, err := r.start(ctx)
	if err != nil {
		_ = rt.Close(ctx)
		return nil, err
	}
	r.spare = inst
	return r, nil
}

// Close releases the compiled code and every instance still open.
func (r *Runtime) Close(ctx context.Context) error {
	if err := r.rt.Close(ctx); err != nil {
		return fmt.Errorf("bindings: close runtime: %w", err)
	}
	return nil
}

// cacheDir resolves RuntimeConfig.CacheDir. A machine without a user cache
// directory still works, only without a disk cache.
func cacheDir(dir string) string {
	switch dir {
	case "-":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "agentsync")
	default:
		return dir
	}
}

// instance is one started module with its exports looked up once. It is not
// safe for concurrent use: its owner (a WasmCore) holds a lock.
type instance struct {
	mod                                                 api.Module
	mem                                                 api.Memory
	alloc, clientNew, clientFree, handle, handleCompact api.Function
	view, message, changes, dig                         api.Function
	stack                                               []uint64
	peak                                                *atomic.Uint64
	limit                                               uint64
	oom                                                 *oomWatch
}

// oomWatch sees the Go runtime's "fatal error: out of memory" on the
// module's stderr, written just before the trap it causes.
type oomWatch struct{ seen atomic.Bool }

func (w *oomWatch) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("out of memory")) {
		w.seen.Store(true)
	}
	return len(p), nil
}

// instantiate returns a new instance: the spare if it is there, else a
// freshly started one.
func (r *Runtime) instantiate(ctx context.Context) (*instance, error) {
	r.mu.Lock()
	inst := r.spare
	r.spare = nil
	r.mu.Unlock()
	if inst != nil {
		return inst, nil
	}
	return r.start(ctx)
}

// start starts a new anonymous instance (_initialize runs the Go runtime's
// initialisation) and checks agentsync_abi_version.
func (r *Runtime) start(ctx context.Context) (*instance, error) {
	oom := &oomWatch{}
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: any number of instances side by side
		WithStartFunctions("_initialize").
		WithStderr(io.MultiWriter(r.stderr, oom))
	if a := newMemoryAllocator(); a != nil {
		ctx = experimental.WithMemoryAllocator(ctx, a)
	}
	mod, err := r.rt.InstantiateModule(ctx, r.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("bindings: start wasm instance: %w", err)
	}
	inst := &instance{mod: mod, mem: mod.Memory(), stack: make([]uint64, 3), peak: &r.peakMemory, limit: r.limit, oom: oom}
	fns := []struct {
		name string
		fn   *api.Function
	}{
		{"agentsync_alloc", &inst.alloc},
		{"agentsync_client_new", &inst.clientNew},
		{"agentsync_client_free", &inst.clientFree},
		{"agentsync_handle", &inst.handle},
		{"agentsync_handle_compact", &inst.handleCompact},
		{"agentsync_view", &inst.view},
		{"agentsync_message", &inst.message},
		{"agentsync_changes", &inst.changes},
		{"agentsync_digest", &inst.dig},
	}
	for _, f := range fns {
		if *f.fn = mod.ExportedFunction(f.name); *f.fn == nil {
			_ = mod.Close(ctx)
			return nil, fmt.Errorf("bindings: wasm module lacks export %s", f.name)
		}
	}
	version := mod.ExportedFunction("agentsync_abi_version")
	if version == nil {
		_ = mod.Close(ctx)
		return nil, fmt.Errorf("bindings: wasm module lacks export agentsync_abi_version")
	}
	res, err := version.Call(ctx)
	if err != nil {
		_ = mod.Close(ctx)
		return nil, fmt.Errorf("bindings: agentsync_abi_version: %w", err)
	}
	if got := int32(res[0]); got != module.ABIVersion {
		_ = mod.Close(ctx)
		return nil, fmt.Errorf("bindings: wasm ABI version %d, want %d", got, module.ABIVersion)
	}
	return inst, nil
}

func (in *instance) close(ctx context.Context) error { return in.mod.Close(ctx) }

// call runs fn with up to three i32 arguments and returns its one result.
// A trap (a panic that escaped, out of memory) comes back as a core_broken
// error: the instance is then undefined and must be discarded.
func (in *instance) call(ctx context.Context, fn api.Function, args ...uint64) (uint64, error) {
	stack := in.stack[:max(len(args), 1)]
	copy(stack, args)
	err := fn.CallWithStack(ctx, stack)
	if size := uint64(in.mem.Size()); size > in.peak.Load() {
		in.peak.Store(size)
	}
	if err != nil {
		name := fn.Definition().ExportNames()
		if in.oom.seen.Load() {
			return 0, &brokenError{err: synccore.Errorf(synccore.CodeCoreBroken, "wasm %v ran out of memory (%d bytes, limit %d): %v",
				name, in.mem.Size(), in.limit, err), cause: ErrMemoryLimit}
		}
		return 0, brokenf("wasm trap in %v: %v", name, err)
	}
	return stack[0], nil
}

// write copies the concatenation of pieces into a module-owned buffer and
// returns its address and length.
func (in *instance) write(ctx context.Context, pieces ...[]byte) (ptr, n uint32, err error) {
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	if size > math.MaxInt32 {
		return 0, 0, synccore.Errorf(synccore.CodeTooLarge, "input of %d bytes is over the module's 2 GiB", size)
	}
	res, err := in.call(ctx, in.alloc, api.EncodeI32(int32(size)))
	if err != nil {
		return 0, 0, err
	}
	ptr = uint32(res)
	if ptr == 0 && size > 0 {
		return 0, 0, brokenf("wasm alloc of %d bytes failed", size)
	}
	at := ptr
	for _, p := range pieces {
		if !in.mem.Write(at, p) {
			return 0, 0, brokenf("wasm alloc returned %d bytes at %d outside memory", size, ptr)
		}
		at += uint32(len(p))
	}
	return ptr, uint32(size), nil
}

// result returns the bytes a packed (ptr<<32)|len result points at. They
// alias the instance's memory and are valid only until the next call.
func (in *instance) result(packed uint64) ([]byte, error) {
	ptr, n := uint32(packed>>32), uint32(packed)
	if n == 0 {
		return nil, nil
	}
	b, ok := in.mem.Read(ptr, n)
	if !ok {
		return nil, brokenf("wasm result %d bytes at %d outside memory", n, ptr)
	}
	return b, nil
}
