package natsfan

import (
	"sync/atomic"
	"testing"

	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/synccore"
)

// Batches published inside a follower's window between its subscription
// and the owner's snapshot answer: one published after the follower
// subscribed but before the snapshot was taken is in the snapshot, and is
// not applied again; those published after the snapshot was taken but
// before the answer was sent (the follower holds them until the snapshot
// is in its mirror) follow it, each once, in order.
func TestFollowerBatchesInsideTheSnapshotWindow(t *testing.T) {
	ns := natstest.Start(t)
	const sid = "ses_1"
	bus := New(natstest.Bus(t, ns.URL(), "owner"), nil)
	t.Cleanup(bus.Close)
	const after = 20 // batches sent after the snapshot's state was taken
	var pub *Publisher
	var asked atomic.Int32 // the answer comes on another goroutine
	var err error
	pub, err = bus.Publish(sid, 5, func() (uint64, []synccore.Frame, bool) {
		asked.Add(1)
		// The follower is subscribed (it flushed before asking): this
		// batch reaches it, and the snapshot below holds it too.
		pub.Send(message(4))
		counter, frames := pub.Counter(), []synccore.Frame{{Kind: synccore.FrameHello, HeadSequence: 4}}
		// After the state is taken, before the answer goes out: these
		// batches are not in the snapshot.
		for i := int64(1); i <= after; i++ {
			pub.Send(message(4 + i))
		}
		return counter, frames, true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	pub.Send(message(1)) // before the follow: its counter is under the snapshot's

	f, sub := follower(t, ns, sid)
	if n := asked.Load(); n != 1 {
		t.Fatalf("the snapshot was asked for %d times", n)
	}
	got := next(t, sub, 1+after)
	if len(got) != 1+after {
		t.Fatalf("%d frames, want the hello and %d messages: %v", len(got), after, kinds(got))
	}
	if got[0].Kind != synccore.FrameHello || got[0].HeadSequence != 4 {
		t.Fatalf("first frame %+v, want the snapshot's hello at head 4", got[0])
	}
	for i, fr := range got[1:] {
		want := int64(5 + i)
		if fr.Kind != synccore.FrameMessage || fr.Message.Sequence != want {
			t.Fatalf("frame %d: %s seq %v, want message %d once, in order (message 4 is in the snapshot): %v", i+1, fr.Kind, fr.Message, want, kinds(got))
		}
		if fr.Seq != uint64(i+2) {
			t.Fatalf("frame %d has seq %d: the subscriber's seq has a gap", i+1, fr.Seq)
		}
	}
	if f.Ended() {
		t.Fatal("the follow ended: a batch inside the window was taken for a gap")
	}
	// The follow goes on with the next batch.
	pub.Send(message(5 + after))
	if more := next(t, sub, 1); len(more) != 1 || more[0].Message == nil || more[0].Message.Sequence != 5+after {
		t.Fatalf("after the window: %v", kinds(more))
	}
}
