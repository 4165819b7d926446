package core

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/synccore"
	"github.com/tetratelabs/wazero/api"
	"github.com/vmihailenco/msgpack/v5"
)

func TestABIUnknownHandleIsBadRequest(t *testing.T) {
	ctx := context.Background()
	inst, err := testRuntime(t).instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close(ctx)

	decodeErr := func(name string, packed uint64) *synccore.Error {
		t.Helper()
		b, err := inst.result(packed)
		if err != nil {
			t.Fatal(err)
		}
		var out synccore.Output
		if err := msgpack.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: decode %x: %v", name, b, err)
		}
		if out.Error == nil {
			t.Fatalf("%s: no error in %+v", name, out)
		}
		return out.Error
	}
	const unknown = 4242
	ptr, _, err := inst.write(ctx, []byte{0x81, 0xa4, 't', 'y', 'p', 'e', 0xa5, 's', 't', 'a', 'r', 't'})
	if err != nil {
		t.Fatal(err)
	}
	res, err := inst.call(ctx, inst.handle, api.EncodeI32(unknown), api.EncodeU32(ptr), 12)
	if err != nil {
		t.Fatal(err)
	}
	if e := decodeErr("handle", res); e.Code != synccore.CodeBadRequest {
		t.Fatalf("handle: code %q, want bad_request", e.Code)
	}
	for name, fn := range map[string]api.Function{"view": inst.view, "digest": inst.dig} {
		res, err := inst.call(ctx, fn, api.EncodeI32(unknown))
		if err != nil {
			t.Fatal(err)
		}
		if e := decodeErr(name, res); e.Code != synccore.CodeBadRequest {
			t.Fatalf("%s: code %q, want bad_request", name, e.Code)
		}
	}
	// A freed handle is unknown from then on and never reused.
	res, err = inst.call(ctx, inst.clientNew)
	if err != nil {
		t.Fatal(err)
	}
	h := api.DecodeI32(res)
	if _, err := inst.call(ctx, inst.clientFree, api.EncodeI32(h)); err != nil {
		t.Fatal(err)
	}
	res, err = inst.call(ctx, inst.view, api.EncodeI32(h))
	if err != nil {
		t.Fatal(err)
	}
	if e := decodeErr("view after free", res); e.Code != synccore.CodeBadRequest {
		t.Fatalf("view after free: code %q, want bad_request", e.Code)
	}
	res, err = inst.call(ctx, inst.clientNew)
	if err != nil {
		t.Fatal(err)
	}
	if h2 := api.DecodeI32(res); h2 == h || h2 <= 0 {
		t.Fatalf("new handle %d after freeing %d", h2, h)
	}
}

func TestABIInputOutsideAllocBufferIsRefused(t *testing.T) {
	ctx := context.Background()
	inst, err := testRuntime(t).instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close(ctx)
	res, err := inst.call(ctx, inst.clientNew)
	if err != nil {
		t.Fatal(err)
	}
	h := api.DecodeI32(res)
	ptr, _, err := inst.write(ctx, make([]byte, 16))
	if err != nil {
		t.Fatal(err)
	}
	// 17 bytes from a 16-byte buffer, and a range before it.
	for _, c := range []struct{ ptr, n uint32 }{{ptr, 17}, {ptr - 8, 8}, {0, 4}} {
		res, err := inst.call(ctx, inst.handle, api.EncodeI32(h), api.EncodeU32(c.ptr), api.EncodeU32(c.n))
		if err != nil {
			t.Fatalf("trap on a bad range: %v", err)
		}
		b, _ := inst.result(res)
		var out synccore.Output
		if err := msgpack.Unmarshal(b, &out); err != nil || out.Error == nil || out.Error.Code != synccore.CodeBadRequest {
			t.Fatalf("range %d+%d: output %+v (%v), want bad_request", c.ptr, c.n, out, err)
		}
	}
}

func TestWasmCoreTrapDiscardsInstanceAndResetRebuilds(t *testing.T) {
	ctx := context.Background()
	// 256 pages (16 MiB): enough to run, too little for a 32 MiB input.
	rt, err := NewRuntime(ctx, RuntimeConfig{CacheDir: t.TempDir(), MemoryLimitPages: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	w, err := NewWasmCore(ctx, rt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, err = w.Handle(synccore.Event{Type: synccore.EvFrames, Data: make([]byte, 32<<20)})
	wantCode(t, err, synccore.CodeCoreBroken)
	if w.inst != nil {
		t.Fatal("the instance was kept after a trap")
	}
	_, err = w.Digest()
	wantCode(t, err, synccore.CodeCoreBroken)
	if err := w.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Digest(); err != nil {
		t.Fatalf("digest after reset: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = w.Digest()
	wantCode(t, err, synccore.CodeClosed)
}
