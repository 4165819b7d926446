package main

import (
	"bytes"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// traces_bad.go: malformed and unknown input. A bad event is refused and
// changes nothing; a bad frame inside a frames event breaks the stream,
// which resynchronises and reports the error.

// mustMsgpack encodes v with sorted map keys, so the traces come out the
// same on every run.
func mustMsgpack(v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// goodThenBad is a WebSocket message of two frames: a valid delta, then a
// delta whose message_id is a number.
func goodThenBad() []byte {
	b := wire.EncodeFrames(frames(fDelta(2, "m1", 1, "p1", 2, "c")))
	b[0] = 0x92
	return append(b, mustMsgpack(map[string]any{"seq": 3, "kind": "delta", "message_id": 5})...)
}

func rawFrames(note string, data []byte, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvFrames}, rawData: data, cmds: cmds}
}

func badInputTraces() []trace {
	streamingAB := golive(page(1, false, A("m1", 1, 1, streaming, T("p1", 1, "streaming", "ab"))))
	backoffAB := view(sBackoff, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "ab")))
	return []trace{
		tr("malformed-frames-bytes", "frames data that is not a msgpack array: the stream is broken, resync, error malformed",
			streamingAB,
			with(one(fails(rawFrames("0xc1 is never valid msgpack", []byte{0xc1}, resyncCmds(anyReason, 1, 187)...), synccore.CodeMalformed)), backoffAB)),

		tr("malformed-frame-mid-message", "the frames before a malformed one are applied; then resync",
			streamingAB,
			with(one(fails(rawFrames("a good delta, then a delta with a numeric message_id", goodThenBad(), append(resyncCmds(anyReason, 1, 187), cRender("m1"))...), synccore.CodeMalformed)),
				view(sBackoff, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "abc"))))),

		tr("truncated-frames", "a WebSocket message cut short is malformed",
			streamingAB,
			with(one(fails(rawFrames("the last byte is missing", func() []byte {
				b := wire.EncodeFrames(frames(fDelta(2, "m1", 1, "p1", 2, "c")))
				return b[:len(b)-1]
			}(), resyncCmds(anyReason, 1, 187)...), synccore.CodeMalformed)), backoffAB)),

		tr("unknown-frame-kind", "an unknown frame kind is refused with unknown_frame and resynchronises",
			streamingAB,
			with(one(fails(evFrames("kind telepathy", frames(synccore.Frame{Seq: 2, Kind: "telepathy"}), resyncCmds(anyReason, 1, 187)...), synccore.CodeUnknownFrame)), backoffAB)),

		tr("unknown-part-type", "a part frame with an unknown part type is refused with unknown_part_type",
			streamingAB,
			with(one(fails(evFrames("part type hologram", frames(fPart(2, "m1", 1, synccore.Part{PartID: "p2", Sequence: 2, Type: "hologram"})), resyncCmds(anyReason, 1, 187)...), synccore.CodeUnknownPartType)), backoffAB)),

		tr("user-part-with-state", "a message frame holding a user part with a state is refused with invalid_part",
			streamingAB,
			with(one(fails(evFrames("user text part in state done", frames(fMsg(2, func() synccore.Message {
				m := U("m2", 2, "x")
				m.Parts[0].State = "done"
				return m
			}())), resyncCmds(anyReason, 1, 187)...), synccore.CodeInvalidPart)), backoffAB)),

		tr("page-with-unknown-part-type", "a snapshot page holding an unknown part type fails the read: resync, error unknown_part_type",
			[]step{
				evStart("start", cStatus("connecting"), cOpen()),
				evFrames("hello", frames(hello(1, 1)), cStatus("syncing"), cFetch(1, 0)),
			},
			with(one(fails(evPage("page", 1, page(1, false, A("m1", 1, 1, streaming, synccore.Part{PartID: "p1", Sequence: 1, Type: "video"})), resyncCmds(anyReason, 1, 187)...), synccore.CodeUnknownPartType)),
				view(sBackoff, 0, false))),

		tr("first-frame-not-hello", "a subscription that does not start with hello is broken",
			[]step{evStart("start", cStatus("connecting"), cOpen())},
			with(one(fails(evFrames("a message frame first", frames(fMsg(1, U("m1", 1, "x"))), resyncCmds(anyReason, 1, 187)...), synccore.CodeMalformed)),
				view(sBackoff, 0, false))),

		tr("malformed-event", "event bytes that do not decode are refused; nothing changes",
			with(one(step{note: "0xc1", rawEvent: []byte{0xc1}, err: synccore.CodeMalformed}), view(synccore.StatusIdle, 0, false))),

		tr("unknown-event", "an unknown event type is refused with unknown_event; nothing changes",
			with(one(step{note: "teleport", ev: synccore.Event{Type: "teleport"}, err: synccore.CodeUnknownEvent}), view(synccore.StatusIdle, 0, false))),

		tr("event-not-allowed", "events that do not fit the status are refused with conflict or bad_request; nothing changes",
			one(fails(evFrames("frames before start", frames(hello(1, 0))), synccore.CodeConflict)),
			one(fails(evOlder("load_older before start"), synccore.CodeConflict)),
			one(step{note: "start without a session id", ev: synccore.Event{Type: synccore.EvStart}, err: synccore.CodeBadRequest}),
			one(evStart("start", cStatus("connecting"), cOpen())),
			one(fails(evStart("start again"), synccore.CodeConflict)),
			with(one(step{note: "jitter out of range", ev: synccore.Event{Type: synccore.EvConnectionLost, Jitter: 5000}, err: synccore.CodeBadRequest}),
				view(synccore.StatusConnecting, 0, false))),
	}
}
