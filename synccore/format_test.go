package synccore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"
)

// TestFormatMatchesFmt: what quickSprintf formats, it formats exactly as
// fmt does; what it cannot, it leaves to fmt (natively).
func TestFormatMatchesFmt(t *testing.T) {
	var nilErr *Error
	args := []any{"s", "", "a\"b\n\x00é", PartTool, RoleUser, MessageDone, VisibilityInternal, 0, -5, int8(-128),
		int16(300), int32(-70000), int64(math.MinInt64), uint(7), uint8(255), uint16(65535), uint32(1 << 31),
		uint64(math.MaxUint64), true, false, nil, 1.5, 1e21, 1e-7, float32(0.1), math.Inf(-1), math.NaN(),
		[]string{"a", "b"}, []string{}, []any{1, "x", nil, []any{int8(2)}, map[string]any{"k": nil}},
		map[string]any{"b": 1, "a": []any{}, "c": map[string]any{}}, []byte{1, 2},
		errors.New("boom"), &Error{Code: "c", Message: "m"}, nilErr, time.Unix(5, 0).UTC(), struct{ A int }{3}, 'x'}
	verbs := []string{"%s", "%v", "%d", "%q", "%x", "%+v", "%5d", "%T"}
	for _, a := range args {
		for _, v := range verbs {
			format := "x " + v + " %% y"
			if got, want := sprintf(format, a), fmt.Sprintf(format, a); got != want {
				t.Errorf("sprintf(%q, %#v) = %q, fmt gives %q", format, a, got, want)
			}
		}
	}
	for _, f := range []string{"%d %d", "%s", "", "100%", "%", "%!", "a %q b"} {
		for _, as := range [][]any{nil, {1}, {1, 2, 3}} {
			if got, want := sprintf(f, as...), fmt.Sprintf(f, as...); got != want {
				t.Errorf("sprintf(%q, %v) = %q, fmt gives %q", f, as, got, want)
			}
		}
	}
	// The messages the core writes are all formatted without fmt, so the
	// WebAssembly module (which has no fmt) writes the same bytes.
	for _, c := range []struct {
		f    string
		args []any
	}{
		{"delta for %s part %q", []any{PartTool, "p1"}},
		{"message %q has sequence %d, already held by %q", []any{"m", int64(3), "n"}},
		{"interaction request kind %v is not approval or question", []any{map[string]any{"a": int8(1)}}},
		{"%s: panic: %v", []any{"agentsync_handle", errors.New("runtime error")}},
		{"jitter %d is outside 0..%d", []any{int64(-1), 1000}},
		{"unknown client handle %d", []any{int32(9)}},
	} {
		if _, ok := quickSprintf(c.f, c.args); !ok {
			t.Errorf("%q needs fmt", c.f)
		}
	}
}

func TestSHA256MatchesCrypto(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := range 300 {
		p := make([]byte, n*7)
		rng.Read(p)
		d := newSHA256()
		for q := p; len(q) > 0; { // written in random pieces
			k := min(len(q), rng.Intn(100))
			d.Write(q[:k])
			q = q[k:]
		}
		if want := sha256.Sum256(p); string(d.Sum(nil)) != string(want[:]) {
			t.Fatalf("%d bytes: %x, want %x", len(p), d.Sum(nil), want)
		}
	}
}
