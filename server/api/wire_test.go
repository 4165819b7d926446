package api

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// populate sets every field of the struct v points to a non-zero value,
// by reflection, so a field added to a contract type later is set here
// too and the comparison with msgpack/v5 catches a wire that lacks it.
func populate(t *testing.T, v any, seed int) {
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		name := rv.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString(name + "-value")
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(seed*100 + i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(seed*100000 + i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Interface:
			f.Set(reflect.ValueOf([]any{name, int64(seed), 1.5, nil}))
		case reflect.Slice, reflect.Pointer:
			// set by the caller
		default:
			t.Fatalf("populate: field %s of kind %s", name, f.Kind())
		}
	}
}

func reflectBytes(t *testing.T, v any) []byte {
	var buf bytes.Buffer
	if err := newEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: bytes differ from msgpack/v5 at %d of %d/%d: got %x, want %x", what, i, len(got), len(want),
		got[i:min(i+24, len(got))], want[i:min(i+24, len(want))])
}

func TestWireMatchesReflection(t *testing.T) {
	var full synccore.Part
	populate(t, &full, 1)
	empty := synccore.Part{PartID: "p0"} // only the fields never omitted
	var msg synccore.Message
	populate(t, &msg, 2)
	msg.Parts = []synccore.Part{full, empty}
	var page synccore.MessagePage
	populate(t, &page, 3)
	page.Items = []synccore.Message{msg, {MessageID: "bare"}, {MessageID: "noparts", Parts: []synccore.Part{}}}

	w := newWire()
	for _, c := range []struct {
		what string
		v    any
		fn   func() error
	}{
		{"full part", &full, func() error { return w.part(&full) }},
		{"empty part", &empty, func() error { return w.part(&empty) }},
		{"message", &msg, func() error { return w.message(&msg) }},
		{"page", &page, func() error { return w.page(&page) }},
		{"empty page", &synccore.MessagePage{}, func() error { return w.page(&synccore.MessagePage{}) }},
	} {
		w.b = w.b[:0]
		if err := c.fn(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		sameBytes(t, c.what, w.b, reflectBytes(t, c.v))
	}

	// Frames: every field set, and one of each kind as the engine sends them.
	var fr synccore.Frame
	populate(t, &fr, 4)
	fr.Message, fr.Part = &msg, &full
	frames := append([]synccore.Frame{fr}, sampleFrames()...)
	got, err := newFrameEncoder().encode(frames)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "frames", got, reflectBytes(t, frames))
}

// TestEncodeWireTypes: pages and messages take the fast path, values
// (not pointers) as the handlers pass them.
func TestEncodeWireTypes(t *testing.T) {
	for _, v := range []any{synccore.MessagePage{Items: []synccore.Message{}}, synccore.Message{MessageID: "m"}} {
		w, ok, err := encodeWire(v)
		if !ok || err != nil {
			t.Fatalf("%T: ok %v err %v", v, ok, err)
		}
		sameBytes(t, reflect.TypeOf(v).String(), w.b, reflectBytes(t, v))
		wirePool.Put(w)
	}
	if _, ok, _ := encodeWire(healthzBody); ok {
		t.Fatal("other types must use msgpack/v5")
	}
}
