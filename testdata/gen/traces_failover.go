package main

import "github.com/agentsync/agentsync/synccore"

// traces_failover.go: a session moving between server nodes.

func failoverTraces() []trace {
	ownerChanged := func(seq uint64, node string, timer uint64, delay int64) step {
		return evFrames("resync: "+node+" no longer serves the session", frames(synccore.Frame{Seq: seq, Kind: synccore.FrameResync, Code: "owner_changed", Reason: node}),
			resyncCmds("server asked to resync: owner_changed "+node, timer, delay)...)
	}
	return []trace{
		tr("owner-changed-on-several-nodes", "owner_changed from one node after another, with a good snapshot read between them, never escalates the backoff: a good read starts it over",
			golive(page(1, false, U("m1", 1, "Hi"))),
			one(ownerChanged(2, "a", 1, 0)),
			reconnect(1, 2),
			one(evPage("head page", 2, page(1, false, U("m1", 1, "Hi")), cStatus(sLive))),
			one(ownerChanged(2, "b", 2, 375)),
			reconnect(2, 3),
			one(evPage("head page", 3, page(1, false, U("m1", 1, "Hi")), cStatus(sLive))),
			one(ownerChanged(2, "c", 3, 375)),
			reconnect(3, 4),
			with(one(evPage("head page", 4, page(1, false, U("m1", 1, "Hi")), cStatus(sLive))),
				view(sLive, 1, false, vu("m1", 1, "Hi")))),
	}
}
