package main

import "github.com/agentsync/agentsync/synccore"

// traces_table.go: one trace per row of the states × events table
// (docs/protocol.md §6.1) for the cells no behaviour trace reaches: every
// event the status refuses, ignores, or takes without a frame or page of
// its own. With the traces before them, every cell of the table is shown
// by a trace, and the doc names which (testdata's TestTableCellsHaveTraces
// checks it).

func tableTraces() []trace {
	const (
		sIdle, sConnecting, sSyncing = synccore.StatusIdle, synccore.StatusConnecting, synccore.StatusSyncing
		sBackoff, sClosed            = synccore.StatusBackoff, synccore.StatusClosed
	)
	empty := page(0, false)
	reject := func(s step) []step { return one(fails(s, synccore.CodeConflict)) }
	closedErr := func(s step) []step { return one(fails(s, synccore.CodeClosed)) }
	return []trace{
		tr("idle-row", "before start: every event but start, set_include_internal and close is refused with conflict; start's own include_internal replaces a setting made before it",
			reject(evOpened("subscription_opened before start")),
			reject(evPage("page before start", 1, empty)),
			reject(evPageFailed("page_failed before start", 1)),
			reject(evLost("connection_lost before start", 0)),
			reject(evTimer("timer_fired before start", 1)),
			one(evInternal("set_include_internal before start: taken, no command", true)),
			one(evStart("start (include_internal absent: false)", cStatus(sConnecting), cOpen())),
			with(one(evFrames("hello: the head page is read without internal messages", frames(hello(1, 0)), cStatus(sSyncing), cFetch(1, 0))),
				view(sSyncing, 0, false))),

		tr("idle-close", "close before start: closed for good",
			with(one(evClose("close before start", cStatus(sClosed))), view(sClosed, 0, false))),

		tr("connecting-row", "connecting (no hello yet): pages and timers nobody asked for are ignored, load_older and set_include_internal wait for the snapshot, close closes the subscription asked for",
			one(evStart("start", cStatus(sConnecting), cOpen())),
			one(fails(evStart("start again"), synccore.CodeConflict)),
			one(evPage("a page nobody asked for", 7, empty)),
			one(evPageFailed("a page_failed nobody asked for", 7)),
			one(evTimer("a timer nobody set", 9)),
			one(evOlder("load_older: nothing older is known yet")),
			one(evInternal("set_include_internal: the next hello reads with it", true)),
			with(one(evClose("close", cCloseSub("closed by the host"), cStatus(sClosed))), view(sClosed, 0, false))),

		tr("syncing-row", "syncing (hello seen, head page in flight): start refused, subscription_opened and unknown timers ignored, set_include_internal re-reads the head page with it, close abandons the read",
			one(evStart("start", cStatus(sConnecting), cOpen())),
			one(evOpened("subscription opened")),
			one(evFrames("hello", frames(hello(1, 0)), cStatus(sSyncing), cFetch(1, 0))),
			one(fails(evStart("start again"), synccore.CodeConflict)),
			one(evOpened("subscription_opened again: ignored")),
			one(evTimer("a timer nobody set", 9)),
			one(evOlder("load_older: nothing older is known yet")),
			one(evInternal("set_include_internal: the head page is read again, with it", true, cFetchI(2, 0))),
			one(evPage("the first read's late answer: superseded", 1, empty)),
			with(one(evClose("close", cCloseSub("closed by the host"), cStatus(sClosed))), view(sClosed, 0, false))),

		tr("live-row", "live: start refused, a late subscription_opened ignored",
			golive(empty),
			one(fails(evStart("start again"), synccore.CodeConflict)),
			with(one(evOpened("subscription_opened again: ignored")), view(sLive, 0, false))),

		tr("backoff-row", "backoff (no subscription): the dead socket's frames and losses are ignored, pages and timers nobody asked for too; close needs no close_subscription",
			golive(empty),
			one(evLost("connection lost", 0, cStatusR(sBackoff, "connection lost: EOF"), cTimer(1, 187))),
			one(fails(evStart("start again"), synccore.CodeConflict)),
			one(evOpened("subscription_opened: ignored")),
			one(evFrames("a dead socket's frames: ignored", frames(hello(1, 0)))),
			one(evPage("a page nobody asked for", 7, empty)),
			one(evPageFailed("a page_failed nobody asked for", 7)),
			one(evLost("connection_lost again: ignored", 0)),
			one(evOlder("load_older: nothing older exists")),
			one(evInternal("set_include_internal: the next hello reads with it", true)),
			with(one(evClose("close", cStatus(sClosed))), view(sClosed, 0, false))),

		tr("closed-row", "closed is final: every event answers closed and changes nothing",
			one(evStart("start", cStatus(sConnecting), cOpen())),
			one(evClose("close", cCloseSub("closed by the host"), cStatus(sClosed))),
			closedErr(evStart("start")),
			closedErr(evOpened("subscription_opened")),
			closedErr(evFrames("frames", frames(hello(1, 0)))),
			closedErr(evPage("page", 1, empty)),
			closedErr(evPageFailed("page_failed", 1)),
			closedErr(evLost("connection_lost", 0)),
			closedErr(evTimer("timer_fired", 1)),
			closedErr(evOlder("load_older")),
			closedErr(evInternal("set_include_internal", true)),
			with(closedErr(evClose("close again")), view(sClosed, 0, false))),
	}
}
