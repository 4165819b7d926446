package api

import (
	"bytes"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

func reflectBytes(t *testing.T, v any) []byte {
	var buf bytes.Buffer
	if err := newEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodeWireTypes: pages and messages take the fast path, values
// (not pointers) as the handlers pass them, and answer msgpack/v5's bytes
// (synccore's TestAppendMatchesMarshal checks every field).
func TestEncodeWireTypes(t *testing.T) {
	frames := sampleFrames()
	msg := *frames[1].Message
	for _, v := range []any{
		synccore.MessagePage{Items: []synccore.Message{}},
		synccore.MessagePage{},
		synccore.MessagePage{Items: []synccore.Message{msg, {MessageID: "bare"}}, Total: 70000, HasMore: true, NextBeforeSequence: 3},
		synccore.Message{MessageID: "m"},
		msg,
	} {
		w, ok, err := encodeWire(v)
		if !ok || err != nil {
			t.Fatalf("%T: ok %v err %v", v, ok, err)
		}
		if want := reflectBytes(t, v); !bytes.Equal(w.b, want) {
			t.Fatalf("%T: bytes differ from msgpack/v5:\n got %x\nwant %x", v, w.b, want)
		}
		wirePool.Put(w)
	}
	if _, ok, _ := encodeWire(healthzBody); ok {
		t.Fatal("other types must use msgpack/v5")
	}
	bad := synccore.Message{MessageID: "m", Parts: []synccore.Part{{PartID: "p", Data: make(chan int)}}}
	if w, ok, err := encodeWire(bad); !ok || err == nil {
		t.Fatalf("unencodable message: ok %v err %v", ok, err)
	} else {
		wirePool.Put(w)
	}
}
