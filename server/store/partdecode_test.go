package store

import (
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// TestDecodePartMatchesReflection checks the hand-written decoder against
// msgpack's reflective one on a part with every field set, so a field added
// to synccore.Part without a case in decodePart fails here.
func TestDecodePartMatchesReflection(t *testing.T) {
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
			t.Fatalf("field %s has kind %s: teach decodePart and this test about it", v.Type().Field(i).Name, f.Kind())
		}
	}
	pc := newPartCodec()
	for _, p := range []synccore.Part{full, {PartID: "p", Sequence: 1, Type: synccore.PartText}, {}} {
		body, err := pc.encode(&p)
		if err != nil {
			t.Fatal(err)
		}
		var want, got synccore.Part
		if err := msgpack.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if err := pc.decode(body, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, p) {
			t.Fatalf("decodePart:\n got %+v\nwant %+v", got, want)
		}
	}
	// Unknown keys (a newer binary's fields) are skipped.
	body, _ := msgpack.Marshal(map[string]any{"part_id": "x", "future": map[string]any{"a": 1}, "sequence": 3})
	var got synccore.Part
	if err := pc.decode(body, &got); err != nil || got.PartID != "x" || got.Sequence != 3 {
		t.Fatalf("unknown key: %+v, %v", got, err)
	}
	// Garbage is an error, not a panic.
	if err := pc.decode([]byte{0x81, 0xc1}, &got); err == nil {
		t.Fatal("garbage decoded")
	}
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
		b.ReportAllocs()
		for range b.N {
			var q synccore.Part
			pc.rd.Reset(body)
			pc.dec.Reset(&pc.rd)
			if err := pc.dec.Decode(&q); err != nil {
				b.Fatal(err)
			}
		}
	})
}
