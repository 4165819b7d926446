package main

import "github.com/agentsync/agentsync/synccore"

// traces_paging.go: load_older, include_internal and stale pages.

func pagingTraces() []trace {
	return []trace{
		tr("load-older", "load_older reads before the oldest message held and prepends; has_more goes false at the start",
			with(golive(page(4, true, U("m3", 3, "three"), U("m4", 4, "four"))), view(sLive, 4, true, vu("m3", 3, "three"), vu("m4", 4, "four"))),
			with(one(evOlder("load older", cFetch(2, 3))), loading(view(sLive, 4, true, vu("m3", 3, "three"), vu("m4", 4, "four")))),
			one(evOlder("asked again while loading: nothing")),
			with(one(evPage("older page", 2, page(4, false, U("m1", 1, "one"), U("m2", 2, "two")), cRender("m1", "m2"))),
				view(sLive, 4, false, vu("m1", 1, "one"), vu("m2", 2, "two"), vu("m3", 3, "three"), vu("m4", 4, "four"))),
			with(one(evOlder("no more history: nothing")),
				view(sLive, 4, false, vu("m1", 1, "one"), vu("m2", 2, "two"), vu("m3", 3, "three"), vu("m4", 4, "four")))),

		tr("load-older-while-new-messages", "new messages arrive at the head while an older page is read; both ends stay right",
			golive(page(3, true, U("m2", 2, "two"), U("m3", 3, "three"))),
			one(evOlder("load older", cFetch(2, 2))),
			one(evFrames("two new messages", frames(fMsg(2, U("m4", 4, "four")), fMsg(3, A("m5", 5, 1, streaming))), cRender("m4", "m5"))),
			with(one(evPage("older page, read when the session had 3 messages", 2, page(3, false, U("m1", 1, "one")), cRender("m1"))),
				view(sLive, 5, false, vu("m1", 1, "one"), vu("m2", 2, "two"), vu("m3", 3, "three"), vu("m4", 4, "four"), vm("m5 5 r1 agent streaming")))),

		tr("load-older-overlap-no-duplicates", "an older page that overlaps the window adds only what is not held",
			golive(page(5, true, U("m4", 4, "four"), U("m5", 5, "five"))),
			one(evOlder("load older", cFetch(2, 4))),
			with(one(evPage("page overlapping m4", 2, page(5, true, U("m2", 2, "two"), U("m3", 3, "three"), U("m4", 4, "four")), cRender("m2", "m3"))),
				view(sLive, 5, true, vu("m2", 2, "two"), vu("m3", 3, "three"), vu("m4", 4, "four"), vu("m5", 5, "five")))),

		tr("older-page-failed-retry", "a failed older page is retried after a backoff timer",
			golive(page(3, true, U("m3", 3, "three"))),
			one(evOlder("load older", cFetch(2, 3))),
			with(one(evPageFailed("failed", 2, cTimer(1, 187))), loading(view(sLive, 3, true, vu("m3", 3, "three")))),
			one(evTimer("retry", 1, cFetch(3, 3))),
			with(one(evPage("older page", 3, page(3, false, U("m1", 1, "one"), U("m2", 2, "two")), cRender("m1", "m2"))),
				view(sLive, 3, false, vu("m1", 1, "one"), vu("m2", 2, "two"), vu("m3", 3, "three")))),

		tr("older-message-updated-while-loading", "a commit to a message older than the window, seen while its page is read, wins over the page's older revision",
			golive(page(3, true, U("m3", 3, "three"))),
			one(evOlder("load older", cFetch(2, 3))),
			one(evFrames("m2 closes, not held yet", frames(fMsg(2, A("m2", 2, 2, done, T("p1", 1, "done", "Late answer")))))),
			with(one(evPage("older page read before that commit", 2, page(3, false, U("m1", 1, "one"), A("m2", 2, 1, streaming, T("p1", 1, "streaming", "Late"))), cRender("m1", "m2"))),
				view(sLive, 3, false, vu("m1", 1, "one"), vm("m2 2 r2 agent done", vp("p1 text done", "Late answer")), vu("m3", 3, "three")))),

		tr("include-internal-switch", "switching include_internal re-reads the head into a new window",
			golive(page(1, false, U("m1", 1, "visible"))),
			one(evFrames("an internal message: not shown", frames(fMsg(2, internal(U("m2", 2, "recovery prompt")))))),
			one(evInternal("include internal", true, cStatusR(synccore.StatusSyncing, "include_internal changed"), cFetchI(2, 0))),
			with(one(evPage("page with the internal message", 2, page(2, false, U("m1", 1, "visible"), internal(U("m2", 2, "recovery prompt"))), cStatus(sLive), cReset())),
				view(sLive, 2, false, vu("m1", 1, "visible"), vu("m2", 2, "recovery prompt"))),
			one(evInternal("exclude internal again", false, cStatusR(synccore.StatusSyncing, "include_internal changed"), cFetch(3, 0))),
			with(one(evPage("visible page", 3, page(1, false, U("m1", 1, "visible")), cStatus(sLive), cReset())),
				view(sLive, 1, false, vu("m1", 1, "visible")))),

		tr("start-options", "page_limit above 200 is capped; include_internal at start goes into every read",
			[]step{
				{note: "start with page_limit 500 and include_internal", ev: synccore.Event{Type: synccore.EvStart, SessionID: sid, PageLimit: 500, IncludeInternal: true},
					cmds: []synccore.Command{cStatus("connecting"), cOpen()}},
				{note: "hello", ev: synccore.Event{Type: synccore.EvFrames}, frames: frames(hello(1, 0)),
					cmds: []synccore.Command{cStatus("syncing"), {Type: synccore.CmdFetchPage, SessionID: sid, RequestID: 1, Limit: 200, IncludeInternal: true}}},
			},
			with(one(evPage("page", 1, page(1, false, internal(U("m1", 1, "audit"))), cStatus(sLive), cReset())),
				view(sLive, 1, false, vu("m1", 1, "audit")))),

		tr("stale-page-ignored", "a page for an unknown or superseded request changes nothing",
			golive(page(1, false, U("m1", 1, "Hi"))),
			one(evPage("unknown request 99", 99, page(1, false, U("zz", 1, "no")))),
			with(one(evPage("request 1 again, already answered", 1, page(1, false, U("zz", 1, "no")))),
				view(sLive, 1, false, vu("m1", 1, "Hi")))),
	}
}
