package multinode

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/natsbus"
	"github.com/agentsync/agentsync/synccore"
)

// startNATSNode starts a node whose frames cross nodes over the embedded
// NATS server ns, on a connection of its own (returned, so a test can
// close it as a dying node's would close).
func startNATSNode(t testing.TB, db string, ns *natstest.Server, name string, ttl time.Duration, tune func(*server.Config)) *node {
	t.Helper()
	nc := natstest.Connect(t, ns.URL(), name)
	n := startNode(t, db, name, ttl, func(c *server.Config) {
		c.Cluster.Transport = natsbus.New(nc)
		if tune != nil {
			tune(c)
		}
	})
	n.nats = nc
	return n
}

// kill stops n as a crash would, in-process: it keeps its leases
// (stalled, no release), its NATS connection and its clients' connections
// drop, and it accepts no more requests.
func (n *node) kill() {
	n.store.stalled.Store(true)
	n.nats.Close()
	_ = n.http.Listener.Close()
	n.http.CloseClientConnections()
}

// drive handles f's events on a goroutine of its own until stop is
// closed; with cutEvery > 0 it also cuts f's connection at random times
// about that far apart. The returned channel closes when it is done.
func (f *follower) drive(stop <-chan struct{}, cutEvery time.Duration, seed uint64) <-chan struct{} {
	done := make(chan struct{})
	rng := rand.New(rand.NewPCG(seed, 7))
	next := func() <-chan time.Time {
		if cutEvery <= 0 {
			return nil
		}
		return time.After(time.Duration(rng.Int64N(int64(2 * cutEvery))))
	}
	go func() {
		defer close(done)
		cut := next()
		for {
			select {
			case <-stop:
				return
			case e := <-f.events:
				f.take(e)
			case <-cut:
				f.cut()
				cut = next()
			}
		}
	}()
	return done
}

// crowd is the followers of one test, driven together.
type crowd struct {
	t     *testing.T
	stop  chan struct{}
	done  []<-chan struct{}
	all   []*follower
	seeds uint64
}

func newCrowd(t *testing.T) *crowd { return &crowd{t: t, stop: make(chan struct{})} }

// join adds a follower of sid on n, driven from now on.
func (c *crowd) join(n *node, sid string, cutEvery time.Duration) *follower {
	f := follow(n, sid)
	c.seeds++
	c.done = append(c.done, f.drive(c.stop, cutEvery, c.seeds))
	c.all = append(c.all, f)
	return f
}

// converge stops driving, then has every follower converge on the digest
// n's server gives of sid, and checks none saw a broken stream.
func (c *crowd) converge(n *node, sid string, timeout time.Duration) {
	c.t.Helper()
	want, err := n.srv.Digest(context.Background(), sid)
	if err != nil {
		c.t.Fatal(err)
	}
	close(c.stop)
	for _, d := range c.done {
		<-d
	}
	for _, f := range c.all {
		f.converge(want, timeout)
		c.t.Logf("a client on node %s converged after %d reconnections", f.n.name, f.backoffs)
		if len(f.breaks) > 0 {
			c.t.Errorf("a client on node %s saw a broken stream: %q", f.n.name, f.breaks)
		}
	}
}

// turnDone waits until sid has n messages, the last one done.
func turnDone(t testing.TB, n *node, sid string, count int, within time.Duration) []synccore.Message {
	t.Helper()
	var h []synccore.Message
	waitFor(t, within, "the turn's end", func() bool {
		h = n.history(sid)
		return len(h) == count && h[count-1].State == synccore.MessageDone
	})
	return h
}

// pending waits for sid's pending interaction and returns its id.
func pending(t *testing.T, n *node, sid string) string {
	t.Helper()
	var id string
	waitFor(t, 10*time.Second, "a pending interaction", func() bool {
		h := n.history(sid)
		for _, p := range h[len(h)-1].Parts {
			if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
				id = p.InteractionID
				return true
			}
		}
		return false
	})
	return id
}

// streamedText reads a raw subscription that joined mid-stream until the
// streaming agent message is done. It rebuilds the message's text from
// the join projection and the deltas after it, failing on a delta that
// does not land at the end of the text it has (torn or doubled text),
// and returns how much text the projection held, the rebuilt text and
// the text of the message's final committed revision.
func streamedText(t *testing.T, c *websocket.Conn, within time.Duration) (joined int, rebuilt, final string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	texts := map[string]*strings.Builder{}
	var order []string
	first := true
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("reading the subscription: %v", err)
		}
		frames, err := wire.DecodeFrames(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range frames {
			switch f.Kind {
			case synccore.FramePart:
				if f.Part.Type != synccore.PartText {
					continue
				}
				b := texts[f.Part.PartID]
				if b == nil {
					b = &strings.Builder{}
					texts[f.Part.PartID] = b
					order = append(order, f.Part.PartID)
				} else if !strings.HasPrefix(f.Part.Text, b.String()) {
					t.Fatalf("part frame rewrote streamed text: %q then %q", b.String(), f.Part.Text)
				}
				b.Reset()
				b.WriteString(f.Part.Text)
				if first {
					joined += len(f.Part.Text)
				}
			case synccore.FrameDelta:
				b := texts[f.PartID]
				if b == nil {
					t.Fatalf("delta for part %s before its part frame", f.PartID)
				}
				if int64(b.Len()) != f.Offset {
					t.Fatalf("delta at offset %d onto %d bytes: torn or doubled text", f.Offset, b.Len())
				}
				b.WriteString(f.Text)
			case synccore.FrameMessage:
				m := f.Message
				if m.Role != synccore.RoleAgent || m.State != synccore.MessageDone {
					continue
				}
				for _, id := range order {
					rebuilt += texts[id].String()
				}
				for _, p := range m.Parts {
					if p.Type == synccore.PartText {
						final += p.Text
					}
				}
				return joined, rebuilt, final
			case synccore.FrameResync, synccore.FrameError:
				t.Fatalf("the subscription ended: %s %s", f.Code, f.Reason)
			}
		}
		first = false
	}
}

func mustStatus(t *testing.T, what string, a answer, want int) {
	t.Helper()
	if a.status != want {
		t.Fatalf("%s: %d %s", what, a.status, a.body)
	}
}
