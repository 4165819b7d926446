package main

import "github.com/agentsync/agentsync/synccore"

// traces_fork.go: the conversation tree as a client sees it. A fork is an
// ordinary session to the core (docs/protocol.md §3.2): its path is the
// parent's messages before the fork point, by their original ids and with
// the fork's session_id, then its own; switching branch is a new
// subscription of another session.

func forkTraces() []trace {
	return []trace{
		tr("switch-to-a-fork-mid-stream", "switching branch while the fork's own reply streams is a subscription joining mid-step: the fork's path (the shared prefix by its original ids, then its own edit and reply) and the reply's projection so far, continued exactly",
			[]step{
				evStart("start on the fork", cStatus(synccore.StatusConnecting), cOpen()),
				evOpened("subscription opened"),
				evFrames("hello: the path's head is the fork's reply", frames(hello(1, 4)), cStatus(synccore.StatusSyncing), cFetch(1, 0)),
				evFrames("the reply's projection so far and a delta, buffered",
					frames(fPart(2, "f4", 1, T("f4.1", 1, "streaming", "Bonjour")), fDelta(3, "f4", 1, "f4.1", 7, " à"))),
			},
			with(one(evPage("head page: two shared messages, then the fork's own", 1,
				page(4, false, U("m1", 1, "Say hello"), A("m2", 2, 2, done, T("m2.1", 1, "done", "Hello!")),
					U("f3", 3, "Say hello in French"), A("f4", 4, 1, streaming)),
				cStatus(sLive), cReset())),
				view(sLive, 4, false, vu("m1", 1, "Say hello"), vm("m2 2 r2 agent done", vp("m2.1 text done", "Hello!")),
					vu("f3", 3, "Say hello in French"), vm("f4 4 r1 agent streaming", vp("f4.1 text streaming", "Bonjour à")))),
			with(one(evFrames("the reply committed", frames(fMsg(4, A("f4", 4, 2, done, T("f4.1", 1, "done", "Bonjour à tous !")))), cRender("f4"))),
				view(sLive, 4, false, vu("m1", 1, "Say hello"), vm("m2 2 r2 agent done", vp("m2.1 text done", "Hello!")),
					vu("f3", 3, "Say hello in French"), vm("f4 4 r2 agent done", vp("f4.1 text done", "Bonjour à tous !"))))),

		tr("fork-while-its-parent-streams", "a fork of a done prefix made while its parent keeps streaming: the fork's subscription carries none of the parent's frames, its first own message follows the prefix, and a done shared message stays as it was",
			golive(page(2, false, U("m1", 1, "Tell me a story"), A("m2", 2, 2, done, T("m2.1", 1, "done", "Once upon a time.")))),
			one(evFrames("the fork's first own message: a regenerated reply at 3", frames(fMsg(2, A("f3", 3, 1, streaming))), cRender("f3"))),
			one(evFrames("its text starts", frames(fPart(3, "f3", 1, T("f3.1", 1, "streaming", "In a land"))), cRender("f3"))),
			one(evFrames("a stale commit of a shared message is ignored: done is final", frames(fMsg(4, A("m2", 2, 1, streaming, T("m2.1", 1, "streaming", "Once")))))),
			with(one(evFrames("committed", frames(fMsg(5, A("f3", 3, 2, done, T("f3.1", 1, "done", "In a land far away.")))), cRender("f3"))),
				view(sLive, 3, false, vu("m1", 1, "Tell me a story"), vm("m2 2 r2 agent done", vp("m2.1 text done", "Once upon a time.")),
					vm("f3 3 r2 agent done", vp("f3.1 text done", "In a land far away."))))),
	}
}
