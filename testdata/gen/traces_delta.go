package main

// traces_delta.go: frame numbering and the revision/offset rules of §4.2.

func streamingOne(text string) []step {
	return golive(page(1, false, A("m1", 1, 1, streaming, T("p1", 1, "streaming", text))))
}

func deltaTraces() []trace {
	return []trace{
		tr("frame-gap-resync", "a missing frame number resynchronises; the view stays stale but whole, and the re-read brings it up to date",
			golive(page(2, false, U("m1", 1, "Hi"), A("m2", 2, 1, streaming, T("p1", 1, "streaming", "Hel")))),
			one(evFrames("delta 2", frames(fDelta(2, "m2", 1, "p1", 3, "lo")), cRender("m2"))),
			with(one(evFrames("frame 3 is missing", frames(fDelta(4, "m2", 1, "p1", 9, "!")), resyncCmds("frame gap: seq 4 after 2", 1, 187)...)),
				view(sBackoff, 2, false, vu("m1", 1, "Hi"), vm("m2 2 r1 agent streaming", vp("p1 text streaming", "Hello")))),
			reconnect(1, 2),
			with(one(evPage("re-read from the head back to m2, the oldest message not done", 2, page(2, false, U("m1", 1, "Hi"), A("m2", 2, 2, done, T("p1", 1, "done", "Hello world"))),
				cStatus(sLive), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Hi"), vm("m2 2 r2 agent done", vp("p1 text done", "Hello world"))))),

		tr("duplicate-frame-number", "a frame number seen twice is a gap too: delivery is not trusted",
			golive(page(1, false, U("m1", 1, "Hi"))),
			one(evFrames("frame 2", frames(fMsg(2, U("m2", 2, "again"))), cRender("m2"))),
			with(one(evFrames("frame 2 again", frames(fMsg(2, U("m2", 2, "again"))), resyncCmds("frame gap: seq 2 after 2", 1, 187)...)),
				view(sBackoff, 2, false, vu("m1", 1, "Hi"), vu("m2", 2, "again")))),

		tr("delta-wrong-offset", "a delta past the end of the text held is a gap",
			streamingOne("abc"),
			with(one(evFrames("offset 5, client holds 3 bytes", frames(fDelta(2, "m1", 1, "p1", 5, "x")), resyncCmds("gap: delta at offset 5 of part p1, client holds 3 bytes", 1, 187)...)),
				view(sBackoff, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "abc"))))),

		tr("delta-duplicate-ignored", "a delta whose text the client already holds is ignored, never applied twice",
			streamingOne("abc"),
			one(evFrames("append def", frames(fDelta(2, "m1", 1, "p1", 3, "def")), cRender("m1"))),
			one(evFrames("def again at offset 3", frames(fDelta(3, "m1", 1, "p1", 3, "def")))),
			one(evFrames("abc again at offset 0", frames(fDelta(4, "m1", 1, "p1", 0, "abc")))),
			with(one(evFrames("append g", frames(fDelta(5, "m1", 1, "p1", 6, "g")), cRender("m1"))),
				view(sLive, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "abcdefg"))))),

		tr("delta-overlap-gap", "a delta that overlaps the end of the text held is a gap, not a partial append",
			streamingOne("abc"),
			with(one(evFrames("offset 2 with two bytes", frames(fDelta(2, "m1", 1, "p1", 2, "cd")), resyncCmds("gap: delta at offset 2 of part p1, client holds 3 bytes", 1, 187)...)),
				view(sBackoff, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "abc"))))),

		tr("delta-utf8-offsets", "offsets count UTF-8 bytes, not characters",
			streamingOne("héllo"),
			one(evFrames("offset 6 after h-e-acute-l-l-o", frames(fDelta(2, "m1", 1, "p1", 6, " wörld")), cRender("m1"))),
			with(one(evFrames("offset 13", frames(fDelta(3, "m1", 1, "p1", 13, " ✓")), cRender("m1"))),
				view(sLive, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "héllo wörld ✓"))))),

		tr("delta-stale-then-future-revision", "a delta of a lower revision is ignored; one of a higher revision is a gap",
			golive(page(1, false, A("m1", 1, 2, streaming, T("p1", 1, "streaming", "ab")))),
			one(evFrames("revision 1: stale", frames(fDelta(2, "m1", 1, "p1", 2, "zz")))),
			with(one(evFrames("revision 3: gap", frames(fDelta(3, "m1", 3, "p1", 2, "c")), resyncCmds("gap: frame for revision 3 of m1, client holds 2", 1, 187)...)),
				view(sBackoff, 1, false, vm("m1 1 r2 agent streaming", vp("p1 text streaming", "ab"))))),

		tr("delta-unknown-part", "a delta for a part the projection does not have is a gap",
			streamingOne("abc"),
			with(one(evFrames("part p9", frames(fDelta(2, "m1", 1, "p9", 0, "x")), resyncCmds("gap: delta for unknown part p9 of m1", 1, 187)...)),
				view(sBackoff, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "abc"))))),

		tr("frames-outside-window-ignored", "part and delta frames of a message older than the window are ignored (it comes with load_older)",
			golive(page(3, true, U("m3", 3, "three"))),
			one(evFrames("part of m2, not held", frames(fPart(2, "m2", 4, T("p1", 1, "streaming", "zz"))))),
			with(one(evFrames("delta of m2, not held", frames(fDelta(3, "m2", 4, "p1", 2, "zz")))),
				view(sLive, 3, true, vu("m3", 3, "three")))),

		tr("part-sequence-gap", "a new part whose sequence skips one is a gap",
			streamingOne("abc"),
			with(one(evFrames("part p3 at sequence 3", frames(fPart(2, "m1", 1, T("p3", 3, "streaming", ""))), resyncCmds("gap: part p3 has sequence 3, expected 2", 1, 187)...)),
				view(sBackoff, 1, false, vm("m1 1 r1 agent streaming", vp("p1 text streaming", "abc"))))),

		tr("join-mid-step", "joining while a step streams: the hello is followed by the projection so far, then live deltas",
			[]step{
				evStart("start", cStatus("connecting"), cOpen()),
				evFrames("hello", frames(hello(1, 2)), cStatus("syncing"), cFetch(1, 0)),
				evFrames("projection so far, and a live delta", frames(fPart(2, "m2", 1, T("p1", 1, "streaming", "Once upon")), fDelta(3, "m2", 1, "p1", 9, " a time"))),
			},
			with(one(evPage("committed revision 1 has no text yet", 1, page(2, false, U("m1", 1, "Tell a story"), A("m2", 2, 1, streaming)),
				cStatus(sLive), cReset())),
				view(sLive, 2, false, vu("m1", 1, "Tell a story"), vm("m2 2 r1 agent streaming", vp("p1 text streaming", "Once upon a time")))),
			with(one(evFrames("next delta", frames(fDelta(4, "m2", 1, "p1", 16, ",")), cRender("m2"))),
				view(sLive, 2, false, vu("m1", 1, "Tell a story"), vm("m2 2 r1 agent streaming", vp("p1 text streaming", "Once upon a time,"))))),
	}
}
