package sqlite

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// TestPartCodecMatchesReflection checks the store's part bodies against
// msgpack's reflective codec on a part with every field set: the blobs are
// what msgpack/v5 writes (so rows written by any binary read the same), and
// decode gives what msgpack/v5 decodes.
func TestPartCodecMatchesReflection(t *testing.T) {
	full := synccore.Part{}
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v-" + v.Type().Field(i).Name)
		case reflect.Int64:
			f.SetInt(int64(i + 1000))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Interface:
			f.Set(reflect.ValueOf(map[string]any{"k": v.Type().Field(i).Name, "n": []any{int8(1), "x", nil, true}}))
		default:
			t.Fatalf("field %s has kind %s: teach this test about it", v.Type().Field(i).Name, f.Kind())
		}
	}
	pc := newPartCodec()
	for _, p := range []synccore.Part{full, {PartID: "p", Sequence: 1, Type: synccore.PartText}, {}} {
		body, err := pc.encode(&p)
		if err != nil {
			t.Fatal(err)
		}
		if lib := libBody(t, &p); !bytes.Equal(body, lib) {
			t.Fatalf("body differs from msgpack/v5:\n got %x\nwant %x", body, lib)
		}
		var want, got synccore.Part
		if err := msgpack.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if err := pc.decode(body, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, p) {
			t.Fatalf("decode:\n got %+v\nwant %+v", got, want)
		}
	}
	// Unknown keys (a newer binary's fields) are skipped.
	body, _ := msgpack.Marshal(map[string]any{"part_id": "x", "future": map[string]any{"a": 1}, "sequence": 3})
	var got synccore.Part
	if err := pc.decode(body, &got); err != nil || got.PartID != "x" || got.Sequence != 3 {
		t.Fatalf("unknown key: %+v, %v", got, err)
	}
	// Garbage is an error, not a panic.
	for _, garbage := range [][]byte{nil, {0x81, 0xc1}, {0x81}} {
		if err := pc.decode(garbage, &got); err == nil {
			t.Fatalf("garbage % x decoded", garbage)
		}
	}
	// A value msgpack cannot encode is refused with a typed error.
	bad := synccore.Part{PartID: "p", Sequence: 1, Type: synccore.PartData, Data: make(chan int)}
	if _, err := pc.encode(&bad); err == nil || err.(*synccore.Error).Code != synccore.CodeInvalidPart {
		t.Fatalf("unencodable part: %v", err)
	}
}

// libBody is what the store wrote with msgpack/v5 before it used
// synccore's codec: compact ints. msgpack/v5 wrote the maps inside `any`
// values in Go's random order; synccore sorts them, one of those orders.
func libBody(t *testing.T, p *synccore.Part) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkDecodePart(b *testing.B) {
	p := synccore.Part{PartID: "tool:2", Sequence: 2, Type: synccore.PartTool, StepID: "step-1", State: synccore.ToolOutputAvailable,
		ToolCallID: "call-1", ToolName: "read_file", Input: map[string]any{"path": "x.go"}, Output: map[string]any{"content": "abc"}}
	pc := newPartCodec()
	body, _ := pc.encode(&p)
	body = append([]byte(nil), body...)
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var q synccore.Part
			if err := pc.decode(body, &q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflect", func(b *testing.B) {
		var rd bytes.Reader
		dec := msgpack.NewDecoder(&rd)
		b.ReportAllocs()
		for range b.N {
			var q synccore.Part
			rd.Reset(body)
			dec.Reset(&rd)
			if err := dec.Decode(&q); err != nil {
				b.Fatal(err)
			}
		}
	})
}
