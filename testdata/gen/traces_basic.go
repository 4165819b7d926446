package main

import "github.com/agentsync/agentsync/synccore"

const (
	sLive    = synccore.StatusLive
	sBackoff = synccore.StatusBackoff
)

func allTraces() []trace {
	var all []trace
	all = append(all, basicTraces()...)
	all = append(all, deltaTraces()...)
	all = append(all, reconnectTraces()...)
	all = append(all, pagingTraces()...)
	all = append(all, badInputTraces()...)
	all = append(all, tableTraces()...)
	all = append(all, failoverTraces()...)
	all = append(all, forkTraces()...)
	return all
}

func basicTraces() []trace {
	return []trace{
		tr("start-and-snapshot", "start, subscribe, hello, then the head page becomes the window",
			with(golive(page(2, false, U("m1", 1, "Hello"), A("m2", 2, 3, done, T("p1", 1, "done", "Hi there")))),
				view(sLive, 2, false, vu("m1", 1, "Hello"), vm("m2 2 r3 agent done", vp("p1 text done", "Hi there"))))),

		tr("empty-session-first-turn", "an empty session: a user message, an agent message created, a part streamed by deltas, then committed",
			golive(page(0, false)),
			one(evFrames("user message", frames(fMsg(2, U("m1", 1, "Write a haiku"))), cRender("m1"))),
			one(evFrames("agent message created", frames(fMsg(3, A("m2", 2, 1, streaming))), cRender("m2"))),
			one(evFrames("text part starts", frames(fPart(4, "m2", 1, T("p1", 1, "streaming", ""))), cRender("m2"))),
			with(one(evFrames("two deltas in one message", frames(fDelta(5, "m2", 1, "p1", 0, "Old pond"), fDelta(6, "m2", 1, "p1", 8, ", a frog")), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Write a haiku"), vm("m2 2 r1 agent streaming", vp("p1 text streaming", "Old pond, a frog")))),
			with(one(evFrames("step committed and closed", frames(fMsg(7, A("m2", 2, 2, done, T("p1", 1, "done", "Old pond, a frog jumps")))), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Write a haiku"), vm("m2 2 r2 agent done", vp("p1 text done", "Old pond, a frog jumps"))))),

		tr("mutations-before-snapshot", "frames that arrive before the snapshot are buffered and applied after it, in order",
			[]step{
				evStart("start", cStatus(synccore.StatusConnecting), cOpen()),
				evFrames("hello", frames(hello(1, 2)), cStatus(synccore.StatusSyncing), cFetch(1, 0)),
				evFrames("a new user message, buffered", frames(fMsg(2, U("m3", 3, "And now?")))),
				evFrames("the agent message closes, buffered", frames(fMsg(3, A("m2", 2, 2, done, T("p1", 1, "done", "Sure."))))),
			},
			with(one(evPage("head page read before both commits", 1, page(2, false, U("m1", 1, "Hi"), A("m2", 2, 1, streaming, T("p1", 1, "streaming", "Su"))),
				cStatus(sLive), cReset())),
				view(sLive, 3, false, vu("m1", 1, "Hi"), vm("m2 2 r2 agent done", vp("p1 text done", "Sure.")), vu("m3", 3, "And now?")))),

		tr("buffered-frames-stale", "buffered frames older than the snapshot are ignored: the page already holds their effect",
			[]step{
				evStart("start", cStatus(synccore.StatusConnecting), cOpen()),
				evFrames("hello", frames(hello(1, 2)), cStatus(synccore.StatusSyncing), cFetch(1, 0)),
				evFrames("stream of revision 1, buffered", frames(fPart(2, "m2", 1, T("p1", 1, "streaming", "Thinking")), fDelta(3, "m2", 1, "p1", 8, " hard"))),
				evFrames("commit of revision 2, buffered", frames(fMsg(4, A("m2", 2, 2, streaming, T("p1", 1, "done", "Thinking hard."))))),
			},
			with(one(evPage("page read after the commit", 1, page(2, false, U("m1", 1, "Go"), A("m2", 2, 2, streaming, T("p1", 1, "done", "Thinking hard."))),
				cStatus(sLive), cReset())),
				view(sLive, 2, false, vu("m1", 1, "Go"), vm("m2 2 r2 agent streaming", vp("p1 text done", "Thinking hard."))))),

		tr("duplicate-message-frame", "the same committed revision twice: the second is ignored",
			golive(page(2, false, U("m1", 1, "Hi"), A("m2", 2, 1, streaming, T("p1", 1, "streaming", "A")))),
			one(evFrames("revision 2", frames(fMsg(2, A("m2", 2, 2, streaming, T("p1", 1, "done", "AB")))), cRender("m2"))),
			with(one(evFrames("revision 2 again", frames(fMsg(3, A("m2", 2, 2, streaming, T("p1", 1, "done", "AB")))))),
				view(sLive, 2, false, vu("m1", 1, "Hi"), vm("m2 2 r2 agent streaming", vp("p1 text done", "AB"))))),

		tr("stale-revision-ignored", "a message, part or delta of a lower revision than the one held is ignored",
			golive(page(1, false, A("m1", 1, 3, streaming, T("p1", 1, "done", "abc")))),
			one(evFrames("older message revision", frames(fMsg(2, A("m1", 1, 2, streaming, T("p1", 1, "streaming", "ab")))))),
			one(evFrames("part of the older revision", frames(fPart(3, "m1", 2, T("p2", 2, "streaming", "x"))))),
			with(one(evFrames("delta of the older revision", frames(fDelta(4, "m1", 2, "p1", 2, "c")))),
				view(sLive, 1, false, vm("m1 1 r3 agent streaming", vp("p1 text done", "abc"))))),

		tr("done-is-final", "nothing changes a done message, not even a higher revision",
			golive(page(1, false, A("m1", 1, 2, done, T("p1", 1, "done", "final")))),
			one(evFrames("a higher revision of a done message", frames(fMsg(2, A("m1", 1, 3, streaming, T("p1", 1, "done", "final"), T("p2", 2, "streaming", "more")))))),
			with(one(evFrames("a delta on the done revision", frames(fDelta(3, "m1", 2, "p1", 5, "!")))),
				view(sLive, 1, false, vm("m1 1 r2 agent done", vp("p1 text done", "final"))))),

		tr("action-appended-to-streaming-message", "an action while the turn streams is a part of the streaming agent message",
			golive(page(2, false, U("m1", 1, "Refactor it"), A("m2", 2, 1, streaming, T("p1", 1, "streaming", "Working")))),
			one(evFrames("action part committed into the streaming message", frames(fMsg(2, A("m2", 2, 2, streaming, T("p1", 1, "streaming", "Working"), Act("a1", 2, "pending", "set_model")))), cRender("m2"))),
			with(one(evFrames("action completed", frames(fMsg(3, A("m2", 2, 3, streaming, T("p1", 1, "streaming", "Working"), Act("a1", 2, "completed", "set_model")))), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Refactor it"), vm("m2 2 r3 agent streaming", vp("p1 text streaming", "Working"), vp("a1 action completed", "set_model"))))),

		tr("action-as-separate-message", "an action while the session is idle is an agent message holding only the action part",
			golive(page(2, false, U("m1", 1, "Hi"), A("m2", 2, 2, done, T("p1", 1, "done", "Done.")))),
			with(one(evFrames("action message", frames(fMsg(2, A("m3", 3, 1, done, Act("a1", 1, "completed", "set_approval_mode")))), cRender("m3"))),
				view(sLive, 3, false, vu("m1", 1, "Hi"), vm("m2 2 r2 agent done", vp("p1 text done", "Done.")), vm("m3 3 r1 agent done", vp("a1 action completed", "set_approval_mode"))))),

		tr("tool-approval", "a tool waits for approval; tool and interaction change state in one commit",
			golive(page(2, false, U("m1", 1, "Delete tmp"), A("m2", 2, 1, streaming))),
			one(evFrames("tool awaits approval", frames(fMsg(2, A("m2", 2, 2, streaming, Tool("t1", 1, "awaiting-approval", "shell"), Inter("i1", 2, "pending", "call-t1")))), cRender("m2"))),
			one(evFrames("approved, running", frames(fMsg(3, A("m2", 2, 3, streaming, Tool("t1", 1, "running", "shell"), Inter("i1", 2, "resolved", "call-t1")))), cRender("m2"))),
			with(one(evFrames("output and answer, closed", frames(fMsg(4, A("m2", 2, 4, done, Tool("t1", 1, "output-available", "shell"), Inter("i1", 2, "resolved", "call-t1"), T("p3", 3, "done", "Deleted.")))), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Delete tmp"), vm("m2 2 r4 agent done", vp("t1 tool output-available", "shell"), vp("i1 interaction resolved", "ia-i1"), vp("p3 text done", "Deleted."))))),

		tr("reasoning-then-text", "reasoning and text parts of one step stream in one WebSocket message; one render",
			golive(page(2, false, U("m1", 1, "Why?"), A("m2", 2, 1, streaming))),
			with(one(evFrames("reasoning, then text", frames(
				fPart(2, "m2", 1, R("r1", 1, "streaming", "")),
				fDelta(3, "m2", 1, "r1", 0, "Let me think"),
				fPart(4, "m2", 1, R("r1", 1, "done", "Let me think")),
				fPart(5, "m2", 1, T("p2", 2, "streaming", "")),
				fDelta(6, "m2", 1, "p2", 0, "Yes.")), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Why?"), vm("m2 2 r1 agent streaming", vp("r1 reasoning done", "Let me think"), vp("p2 text streaming", "Yes."))))),

		tr("close", "close ends syncing for good; later events are refused with closed",
			golive(page(1, false, U("m1", 1, "Bye"))),
			one(evClose("close", cCloseSub("closed by the host"), cStatus(synccore.StatusClosed))),
			one(fails(evFrames("a late frame", frames(fMsg(2, U("m2", 2, "late")))), synccore.CodeClosed)),
			with(one(fails(evClose("close again"), synccore.CodeClosed)),
				view(synccore.StatusClosed, 1, false, vu("m1", 1, "Bye")))),
	}
}
