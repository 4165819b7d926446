package natsfan

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/synccore"
)

// owner stands for the node serving a session: a Publisher whose
// snapshot is a hello at head, and raw sends for batches out of order.
type owner struct {
	t    *testing.T
	bus  *Bus
	pub  *Publisher
	head int64
}

func startOwner(t *testing.T, ns *natstest.Server, sid string, epoch int64) *owner {
	o := &owner{t: t, bus: New(natstest.Bus(t, ns.URL(), "owner"), nil), head: 3}
	t.Cleanup(o.bus.Close)
	var err error
	o.pub, err = o.bus.Publish(sid, epoch, func() (uint64, []synccore.Frame, bool) {
		return o.pub.Counter(), []synccore.Frame{{Kind: synccore.FrameHello, HeadSequence: o.head}}, true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.pub.Close)
	return o
}

// message is a batch of one committed user message at sequence seq.
func message(seq int64) []synccore.Frame {
	return []synccore.Frame{{Kind: synccore.FrameMessage, Message: &synccore.Message{
		MessageID: "m", SessionID: "ses_1", Sequence: seq, Revision: 1, Role: synccore.RoleUser,
		Parts: []synccore.Part{{PartID: "p", Sequence: 1, Type: synccore.PartText, Text: "hi"}}}}}
}

// raw publishes a batch with any epoch and counter.
func (o *owner) raw(sid string, epoch int64, counter uint64, frames []synccore.Frame) {
	o.t.Helper()
	data, err := appendBatch(nil, epoch, counter, frames)
	if err != nil {
		o.t.Fatal(err)
	}
	if err := o.bus.nc.Publish(framesPrefix+sid, data); err != nil {
		o.t.Fatal(err)
	}
}

func follower(t *testing.T, ns *natstest.Server, sid string) (*Follower, *fanout.Subscriber) {
	t.Helper()
	bus := New(natstest.Bus(t, ns.URL(), "follower"), nil)
	t.Cleanup(bus.Close)
	f, sub, err := bus.Follow(context.Background(), sid, fanout.NewHub(fanout.Limits{}), func(context.Context) (int64, error) { return 7, nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return f, sub
}

// next reads the subscriber's frames until it has n or it ends.
func next(t *testing.T, sub *fanout.Subscriber, n int) []synccore.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []synccore.Frame
	for len(out) < n {
		frames, err := sub.Next(ctx)
		out = append(out, frames...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", len(out), err)
		}
	}
	return out
}

func kinds(frames []synccore.Frame) (out []string) {
	for _, f := range frames {
		out = append(out, f.Kind+":"+f.Code)
	}
	return out
}

// A follower starts at the owner's snapshot, applies the batches after it
// in order with gapless seq, drops what an older epoch sends, and ends
// with a resync at a gap in the counter.
func TestFollowerGap(t *testing.T) {
	ns := natstest.Start(t)
	o := startOwner(t, ns, "ses_1", 5)
	o.pub.Send(message(1)) // before the follow: in its snapshot
	f, sub := follower(t, ns, "ses_1")
	o.pub.Send(message(4))
	o.raw("ses_1", 4, 9, message(9)) // a node that lost the lease: dropped
	o.pub.Send(message(5))
	got := next(t, sub, 3)
	if len(got) != 3 || got[0].Kind != synccore.FrameHello || got[0].HeadSequence != 3 ||
		got[1].Message.Sequence != 4 || got[2].Message.Sequence != 5 || got[2].Seq != 3 {
		t.Fatalf("frames %v %+v", kinds(got), got)
	}
	o.raw("ses_1", 5, o.pub.Counter()+2, message(7)) // counter skips one
	got = next(t, sub, 1)
	if len(got) != 1 || got[0].Kind != synccore.FrameResync || got[0].Code != fanout.ResyncOwnerChanged || got[0].Seq != 4 {
		t.Fatalf("after a gap: %v", kinds(got))
	}
	if !f.Ended() {
		t.Fatal("the follow goes on after a gap")
	}
	if _, ok := f.Subscribe(); ok {
		t.Fatal("an ended follow took a subscriber")
	}
}

// A batch of a newer epoch (another node took the session) ends the
// follow with a resync.
func TestFollowerNewEpoch(t *testing.T) {
	ns := natstest.Start(t)
	o := startOwner(t, ns, "ses_1", 5)
	_, sub := follower(t, ns, "ses_1")
	o.raw("ses_1", 6, 1, message(4))
	got := next(t, sub, 2)
	if len(got) != 2 || got[0].Kind != synccore.FrameHello || got[1].Kind != synccore.FrameResync {
		t.Fatalf("after a new epoch: %v", kinds(got))
	}
}

// No node serves the session: the subscriber starts at the committed
// head, and the first batch of a new owner resyncs it.
func TestFollowerNoOwner(t *testing.T) {
	ns := natstest.Start(t)
	_, sub := follower(t, ns, "ses_1")
	got := next(t, sub, 1)
	if got[0].Kind != synccore.FrameHello || got[0].HeadSequence != 7 {
		t.Fatalf("hello of an unserved session: %+v", got[0])
	}
	o := startOwner(t, ns, "ses_1", 1)
	o.pub.Send(message(8))
	got = next(t, sub, 1)
	if len(got) != 1 || got[0].Kind != synccore.FrameResync {
		t.Fatalf("after a new owner: %v", kinds(got))
	}
}

// A lost NATS connection ends every follow with a resync; while it is
// down a follow is refused, retryably.
func TestFollowerLostConnection(t *testing.T) {
	ns := natstest.Start(t)
	startOwner(t, ns, "ses_1", 1)
	bus := New(natstest.Bus(t, ns.URL(), "follower"), nil)
	t.Cleanup(bus.Close)
	_, sub, err := bus.Follow(context.Background(), "ses_1", fanout.NewHub(fanout.Limits{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	next(t, sub, 1)
	ns.Stop()
	got := next(t, sub, 1)
	if len(got) != 1 || got[0].Kind != synccore.FrameResync {
		t.Fatalf("after NATS stopped: %v", kinds(got))
	}
	_, _, err = bus.Follow(context.Background(), "ses_1", fanout.NewHub(fanout.Limits{}), nil)
	var se *synccore.Error
	if !errors.As(err, &se) || se.Code != synccore.CodeClosed {
		t.Fatalf("follow while NATS is down: %v", err)
	}
}

// A session id that cannot be a NATS subject token is refused.
func TestFollowerBadID(t *testing.T) {
	ns := natstest.Start(t)
	bus := New(natstest.Bus(t, ns.URL(), "follower"), nil)
	t.Cleanup(bus.Close)
	for _, id := range []string{"", "a.b", "a*", "a>"} {
		if _, _, err := bus.Follow(context.Background(), id, fanout.NewHub(fanout.Limits{}), nil); err == nil {
			t.Errorf("follow %q: no error", id)
		}
	}
}

// bigMessage is a batch past NATS's default max_payload (1 MB).
func bigMessage(seq int64) []synccore.Frame {
	frames := message(seq)
	frames[0].Message.Parts[0].Text = strings.Repeat("x", 2<<20)
	return frames
}

// A batch too large for NATS is lost: the owner says so at once, and the
// followers resync rather than miss it.
func TestFollowerBatchTooLarge(t *testing.T) {
	ns := natstest.Start(t)
	o := startOwner(t, ns, "ses_1", 5)
	_, sub := follower(t, ns, "ses_1")
	o.pub.Send(bigMessage(4))
	got := next(t, sub, 2)
	if len(got) != 2 || got[1].Kind != synccore.FrameResync {
		t.Fatalf("after a batch too large: %v", kinds(got))
	}
}

// A snapshot too large for NATS refuses the follow at once, retryably.
func TestFollowerSnapshotTooLarge(t *testing.T) {
	ns := natstest.Start(t)
	o := &owner{t: t, bus: New(natstest.Bus(t, ns.URL(), "owner"), nil)}
	t.Cleanup(o.bus.Close)
	pub, err := o.bus.Publish("ses_1", 1, func() (uint64, []synccore.Frame, bool) {
		return 0, bigMessage(1), true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	bus := New(natstest.Bus(t, ns.URL(), "follower"), nil)
	t.Cleanup(bus.Close)
	start := time.Now()
	_, _, err = bus.Follow(context.Background(), "ses_1", fanout.NewHub(fanout.Limits{}), nil)
	var se *synccore.Error
	if !errors.As(err, &se) || se.Code != synccore.CodeClosed || time.Since(start) >= SnapshotTimeout {
		t.Fatalf("follow of a snapshot too large: %v after %s", err, time.Since(start))
	}
}
