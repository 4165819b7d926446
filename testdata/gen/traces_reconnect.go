package main

import "github.com/agentsync/agentsync/synccore"

// traces_reconnect.go: losing the connection, backoff, and the re-read.

func reconnectTraces() []trace {
	return []trace{
		tr("reconnect-mid-step", "the connection drops while a step streams; after the reconnect the join frames continue the text exactly",
			golive(page(2, false, U("m1", 1, "Answer?"), A("m2", 2, 1, streaming, T("p1", 1, "streaming", "The answer")))),
			one(evFrames("delta", frames(fDelta(2, "m2", 1, "p1", 10, " is")), cRender("m2"))),
			with(one(evLost("connection lost, jitter 200", 200, cStatusR(sBackoff, "connection lost: EOF"), cTimer(1, 150))),
				view(sBackoff, 2, false, vu("m1", 1, "Answer?"), vm("m2 2 r1 agent streaming", vp("p1 text streaming", "The answer is")))),
			reconnect(1, 2),
			one(evFrames("projection so far and a delta, buffered", frames(fPart(2, "m2", 1, T("p1", 1, "streaming", "The answer is 42")), fDelta(3, "m2", 1, "p1", 16, ".")))),
			with(one(evPage("head page: still revision 1", 2, page(2, false, U("m1", 1, "Answer?"), A("m2", 2, 1, streaming)), cStatus(sLive), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Answer?"), vm("m2 2 r1 agent streaming", vp("p1 text streaming", "The answer is 42.")))),
			with(one(evFrames("committed and closed", frames(fMsg(4, A("m2", 2, 2, done, T("p1", 1, "done", "The answer is 42.")))), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Answer?"), vm("m2 2 r2 agent done", vp("p1 text done", "The answer is 42."))))),

		tr("crash-recovery-error-part", "the server died mid-step: on restart it closed the message with an error part; the streamed text that was never committed is gone",
			golive(page(2, false, U("m1", 1, "Run it"), A("m2", 2, 1, streaming, T("p1", 1, "done", "Starting.")))),
			one(evFrames("second part streams", frames(fPart(2, "m2", 1, T("p2", 2, "streaming", "Step one"))), cRender("m2"))),
			one(evLost("connection lost, no jitter given", 0, cStatusR(sBackoff, "connection lost: EOF"), cTimer(1, 187))),
			reconnect(1, 2),
			with(one(evPage("the restarted server closed m2", 2, page(2, false, U("m1", 1, "Run it"), A("m2", 2, 2, done, T("p1", 1, "done", "Starting."), Err("e1", 2, "process_restarted"))),
				cStatus(sLive), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Run it"), vm("m2 2 r2 agent done", vp("p1 text done", "Starting."), vp("e1 error", "process_restarted"))))),

		tr("server-resync-frame", "a server-asked resync reconnects at once (0 ms), later attempts back off",
			golive(page(1, false, U("m1", 1, "Hi"))),
			one(evFrames("resync: slow consumer", frames(synccore.Frame{Seq: 2, Kind: synccore.FrameResync, Code: "slow_consumer", Reason: "queue full"}),
				resyncCmds("server asked to resync: slow_consumer queue full", 1, 0)...)),
			one(evTimer("timer", 1, cStatus(synccore.StatusConnecting), cOpen())),
			with(one(evLost("the new connection fails", 0, cStatusR(sBackoff, "connection lost: EOF"), cTimer(2, 375))),
				view(sBackoff, 1, false, vu("m1", 1, "Hi")))),

		tr("server-error-frame", "an error frame ends the subscription: resync with backoff, the error reported",
			golive(page(1, false, U("m1", 1, "Hi"))),
			with(one(fails(evFrames("error frame", frames(synccore.Frame{Seq: 2, Kind: synccore.FrameError, Code: "internal", Reason: "database is locked"}),
				resyncCmds("internal: server error frame: database is locked", 1, 187)...), synccore.CodeInternal)),
				view(sBackoff, 1, false, vu("m1", 1, "Hi")))),

		tr("head-page-failed", "a failed snapshot read resynchronises with backoff",
			[]step{
				evStart("start", cStatus("connecting"), cOpen()),
				evFrames("hello", frames(hello(1, 0)), cStatus("syncing"), cFetch(1, 0)),
				evPageFailed("page failed", 1, resyncCmds("snapshot read failed: HTTP 503", 1, 187)...),
			},
			reconnect(1, 2),
			with(one(evPage("page", 2, page(1, false, U("m1", 1, "Hi")), cStatus(sLive), cReset())),
				view(sLive, 1, false, vu("m1", 1, "Hi")))),

		tr("connection-lost-while-syncing", "frames buffered on a lost subscription are dropped; the late page of the old attempt is ignored",
			[]step{
				evStart("start", cStatus("connecting"), cOpen()),
				evFrames("hello", frames(hello(1, 1)), cStatus("syncing"), cFetch(1, 0)),
				evFrames("buffered", frames(fMsg(2, U("m2", 2, "lost with the socket")))),
				evLost("lost", 0, cStatusR(sBackoff, "connection lost: EOF"), cTimer(1, 187)),
			},
			reconnect(1, 2),
			one(evPage("late page of the first attempt", 1, page(1, false, U("m1", 1, "Hi")))),
			with(one(evPage("page of this attempt", 2, page(2, false, U("m1", 1, "Hi"), U("m2", 2, "lost with the socket")), cStatus(sLive), cReset())),
				view(sLive, 2, false, vu("m1", 1, "Hi"), vu("m2", 2, "lost with the socket")))),

		tr("backoff-grows-and-resets", "consecutive failures double the delay; being live and applying a frame resets it",
			[]step{
				evStart("start", cStatus("connecting"), cOpen()),
				evLost("attempt 1 fails", 1000, cStatusR(sBackoff, "connection lost: EOF"), cTimer(1, 250)),
				evTimer("retry", 1, cStatus("connecting"), cOpen()),
				evLost("attempt 2 fails", 1000, cStatusR(sBackoff, "connection lost: EOF"), cTimer(2, 500)),
				evTimer("retry", 2, cStatus("connecting"), cOpen()),
				evLost("attempt 3 fails", 1000, cStatusR(sBackoff, "connection lost: EOF"), cTimer(3, 1000)),
				evTimer("retry", 3, cStatus("connecting"), cOpen()),
				evFrames("hello", frames(hello(1, 0)), cStatus("syncing"), cFetch(1, 0)),
				evPage("page", 1, page(0, false), cStatus(sLive), cReset()),
				evFrames("a frame applied while live", frames(fMsg(2, U("m1", 1, "hi"))), cRender("m1")),
			},
			with(one(evLost("the next failure starts over", 1000, cStatusR(sBackoff, "connection lost: EOF"), cTimer(4, 250))),
				view(sBackoff, 1, false, vu("m1", 1, "hi")))),

		tr("reconnect-rereads-to-oldest-not-done", "after a reconnect the client reads back from the head until the oldest message it holds that is not done",
			golive(page(5, true, A("m3", 3, 1, streaming, T("p1", 1, "streaming", "x")), U("m4", 4, "four"), U("m5", 5, "five"))),
			one(evLost("lost", 0, cStatusR(sBackoff, "connection lost: EOF"), cTimer(1, 187))),
			reconnect(1, 2),
			one(evPage("head page starts at 5: not back to m3 yet", 2, page(7, true, U("m5", 5, "five"), U("m6", 6, "six"), U("m7", 7, "seven")), cFetch(3, 5))),
			with(one(evPage("next page reaches m3", 3, page(7, true, A("m3", 3, 2, done, T("p1", 1, "done", "xyz")), U("m4", 4, "four")),
				cStatus(sLive), cRender("m3", "m6", "m7"))),
				view(sLive, 7, true, vm("m3 3 r2 agent done", vp("p1 text done", "xyz")), vu("m4", 4, "four"), vu("m5", 5, "five"), vu("m6", 6, "six"), vu("m7", 7, "seven")))),

		tr("reconnect-all-done-reads-one-page", "when every message held is done the re-read needs only the messages after the newest one",
			golive(page(2, true, U("m2", 2, "two"))),
			one(evLost("lost", 0, cStatusR(sBackoff, "connection lost: EOF"), cTimer(1, 187))),
			reconnect(1, 2),
			with(one(evPage("head page starting at 3 already reaches the newest held + 1", 2, page(4, true, U("m3", 3, "three"), U("m4", 4, "four")),
				cStatus(sLive), cRender("m3", "m4"))),
				view(sLive, 4, true, vu("m2", 2, "two"), vu("m3", 3, "three"), vu("m4", 4, "four")))),
	}
}
