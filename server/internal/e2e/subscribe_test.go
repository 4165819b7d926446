package e2e

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// follow reads a subscription into a mirror until done says stop.
func follow(t testing.TB, w *wsClient, mir *mirror, done func(f synccore.Frame) bool) {
	t.Helper()
	for {
		frames, err := w.read(30 * time.Second)
		if err != nil {
			t.Fatalf("read after seq %d: %v", w.lastSeq, err)
		}
		mir.apply(frames)
		for _, f := range frames {
			if done(f) {
				return
			}
		}
	}
}

// agentDone matches the committed message frame that closes an agent message.
func agentDone(f synccore.Frame) bool {
	return f.Kind == synccore.FrameMessage && f.Message.Role == synccore.RoleAgent && f.Message.State == synccore.MessageDone
}

func TestSubscribeStream(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	w := s.subscribe(sid)
	frames, err := w.read(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if f := frames[0]; f.Kind != synccore.FrameHello || f.Seq != 1 || f.SessionID != sid || f.HeadSequence != 0 ||
		f.Protocol != synccore.ProtocolVersion {
		t.Fatalf("first frame %+v", f)
	}
	mir := newMirror(t)
	mir.apply(frames)
	s.say(sid, "scenario:text chars=600 delta=4")
	follow(t, w, mir, agentDone)
	msgs := s.waitIdle(sid, 2)
	for _, m := range msgs {
		got := mir.msgs[m.MessageID]
		if got == nil || got.Revision != m.Revision || textOf(*got) != textOf(m) {
			t.Fatalf("subscription view of #%d differs from the snapshot", m.Sequence)
		}
	}
	if mir.deltas == 0 {
		t.Fatal("no delta frames: nothing was streamed")
	}
}

// TestJoinMidStream: a subscriber that joins while a step streams gets
// the text streamed so far in a part frame, then deltas that continue it.
func TestJoinMidStream(t *testing.T) {
	s := newServer(t, serverOpts{Speed: model.Paced(time.Millisecond)})
	sid := s.createSession()
	first := s.subscribe(sid)
	early := newMirror(t)
	s.say(sid, "scenario:text chars=4000 delta=5")
	follow(t, first, early, func(synccore.Frame) bool { return early.deltas >= 30 })

	late := s.subscribe(sid)
	mir := newMirror(t)
	var projections []string
	follow(t, late, mir, func(f synccore.Frame) bool {
		for _, m := range mir.msgs {
			if m.Role == synccore.RoleAgent {
				projections = append(projections, textOf(*m))
			}
		}
		return agentDone(f)
	})
	if mir.hello.HeadSequence < 2 {
		t.Fatalf("hello head_sequence %d, want >= 2 (user + streaming agent message)", mir.hello.HeadSequence)
	}
	final := lastAgent(t, s.waitIdle(sid, 2))
	joined := ""
	for _, txt := range mir.joinedText {
		joined += txt
	}
	if joined == "" {
		t.Fatal("the late subscriber got no streamed text in its first part frames")
	}
	if !strings.HasPrefix(textOf(final), joined) {
		t.Fatalf("joined text is not a prefix of the final text")
	}
	for i, p := range projections {
		if !strings.HasPrefix(textOf(final), p) {
			t.Fatalf("projection %d (%d bytes) is not a prefix of the final text", i, len(p))
		}
	}
	if got := textOf(*mir.msgs[final.MessageID]); got != textOf(final) {
		t.Fatalf("late subscriber ended with %d bytes, snapshot has %d", len(got), len(textOf(final)))
	}
	follow(t, first, early, agentDone)
	if textOf(*early.msgs[final.MessageID]) != textOf(final) {
		t.Fatal("first subscriber's text differs from the snapshot")
	}
}

// TestSlowSubscriber: a subscriber that never reads is told to resync
// while the fast ones get every frame and the session never waits.
func TestSlowSubscriber(t *testing.T) {
	// Small queues and socket buffers make a stalled client overflow fast;
	// the long write timeout keeps its connection until it reads again, so
	// it can see the resync frame; the light pacing keeps the fast readers
	// ahead even on a loaded machine.
	s := newServer(t, serverOpts{
		// Deltas wait folded, so the bytes bound the queue: 144 KiB at 25
		// µs a delta of 16 bytes give a fast reader ~225 ms of slack for a
		// descheduled goroutine; the slow one still overflows, as 200 KB
		// are streamed.
		QueueLimit: 4096, QueueBytes: 144 << 10, SendBuffer: 4096, WriteTimeout: 5 * time.Minute,
		Speed: model.Speed{Delta: 25 * time.Microsecond},
	})
	sid := s.createSession()

	// The slow client shrinks its socket buffer so the stream cannot hide
	// in kernel buffers.
	dialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = c.(*net.TCPConn).SetReadBuffer(4096)
		}
		return c, err
	}}
	slow, _, err := dialer.Dial(s.wsURL(sid), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()

	// Fast readers take every message off the socket at once and check
	// it on a separate goroutine, so checking never slows their reads.
	const fast = 3
	mirrors := make([]*mirror, fast)
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := range fast {
		w := s.subscribe(sid)
		mirrors[i] = newMirror(t)
		inbox := make(chan []byte, 1<<20)
		go func() {
			defer close(inbox)
			for {
				_, data, err := w.c.ReadMessage()
				if err != nil {
					return // closed by the checker below, or at cleanup
				}
				inbox <- data
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.c.Close()
			for data := range inbox {
				frames := decodeFrames(t, data)
				for _, f := range frames {
					if f.Seq != w.lastSeq+1 {
						failed.Store(errors.New("gap on a fast subscriber"))
						return
					}
					w.lastSeq = f.Seq
					if f.Kind == synccore.FrameResync {
						failed.Store(errors.New("a fast subscriber was resynced"))
						return
					}
				}
				if err := mirrors[i].try(frames); err != nil {
					failed.Store(err)
					return
				}
				for _, f := range frames {
					if agentDone(f) {
						return
					}
				}
			}
			failed.Store(errors.New("a fast subscriber's connection ended early"))
		}()
	}
	start := time.Now()
	s.say(sid, "scenario:long chars=200000 delta=16")
	wg.Wait()
	if v := failed.Load(); v != nil {
		t.Fatalf("fast subscriber: %v", v)
	}
	final := lastAgent(t, s.waitIdle(sid, 2))
	t.Logf("200,000 runes streamed to %d fast subscribers in %s", fast, time.Since(start))
	for i, m := range mirrors {
		if got := textOf(*m.msgs[final.MessageID]); got != textOf(final) {
			t.Fatalf("fast subscriber %d has %d bytes, snapshot %d", i, len(got), len(textOf(final)))
		}
	}

	// Now the slow one reads: a continuous run of frames, then resync,
	// then a clean close. The read deadline is long on purpose: its tiny
	// receive window has been shut for as long as the stream took (a
	// minute and more under -race on a loaded machine), and the server's
	// kernel by then probes a zero window only every tens of seconds
	// (exponential backoff up to 120 s), so the rest of the data may take
	// that long to start flowing again. The server's write timeout (5 min)
	// is longer still.
	var last uint64
	var resync *synccore.Frame
	for {
		_ = slow.SetReadDeadline(time.Now().Add(3 * time.Minute))
		_, data, err := slow.ReadMessage()
		if err != nil {
			if resync == nil {
				t.Fatalf("slow subscriber ended without a resync frame after seq %d: %v", last, err)
			}
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Fatalf("slow subscriber close: %v", err)
			}
			break
		}
		for _, f := range decodeFrames(t, data) {
			if f.Seq != last+1 {
				t.Fatalf("slow subscriber: seq %d after %d", f.Seq, last)
			}
			last = f.Seq
			if f.Kind == synccore.FrameResync {
				resync = &f
			}
		}
	}
	if resync.Code != fanout.ResyncSlowConsumer {
		t.Fatalf("resync code %q", resync.Code)
	}
}

// TestPingAndIdle: the server pings, and drops a peer that never answers.
func TestPingAndIdle(t *testing.T) {
	// Idle limit: 2 × 50ms + 200ms = 300ms, wide enough for a loaded machine.
	s := newServer(t, serverOpts{PingInterval: 50 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	sid := s.createSession()
	w := s.subscribe(sid)
	var pings atomic.Int32
	w.c.SetPingHandler(func(data string) error {
		pings.Add(1)
		return w.c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	// Reading answers pings; the connection stays up well past the idle limit.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		_ = w.c.SetReadDeadline(deadline)
		if _, _, err := w.c.ReadMessage(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			t.Fatalf("connection dropped while answering pings: %v", err)
		}
	}
	if pings.Load() < 4 {
		t.Fatalf("%d pings in 1s at a 50ms interval", pings.Load())
	}

	// A peer that never answers (never reads) is dropped after the idle
	// limit.
	silent := s.subscribe(sid)
	time.Sleep(time.Second)
	_ = silent.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := silent.c.ReadMessage(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("a silent peer was not dropped")
			}
			break
		}
	}
}

// TestClientDataMessages: small data messages from a client are ignored;
// one over the 4 KiB read limit closes the connection with 1009.
func TestClientDataMessages(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	w := s.subscribe(sid)
	if _, err := w.read(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := w.c.WriteMessage(websocket.TextMessage, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	s.say(sid, "hello")
	mir := newMirror(t)
	mir.hello = &synccore.Frame{}
	follow(t, w, mir, agentDone) // still streaming after the ignored message

	if err := w.c.WriteMessage(websocket.BinaryMessage, make([]byte, 5000)); err != nil {
		t.Fatal(err)
	}
	_ = w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := w.c.ReadMessage()
		if err == nil {
			continue
		}
		if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
			t.Fatalf("oversize client message: %v, want close 1009", err)
		}
		break
	}
}

// TestShutdownClosesSubscriptions: Manager.Shutdown closes the streaming
// message with an error part, subscribers get that snapshot and then a
// going-away close frame.
func TestShutdownClosesSubscriptions(t *testing.T) {
	s := newServer(t, serverOpts{Speed: model.Paced(time.Millisecond)})
	sid := s.createSession()
	w := s.subscribe(sid)
	mir := newMirror(t)
	s.say(sid, "scenario:long chars=100000")
	follow(t, w, mir, func(synccore.Frame) bool { return mir.deltas >= 10 })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Mgr.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	var closed *synccore.Message
	for {
		frames, err := w.read(10 * time.Second)
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
				t.Fatalf("after shutdown: %v, want close 1001", err)
			}
			break
		}
		mir.apply(frames)
		for _, f := range frames {
			if agentDone(f) {
				closed = f.Message
			}
		}
	}
	if closed == nil || len(partsOf(*closed, synccore.PartError)) != 1 {
		t.Fatalf("no closing snapshot with an error part before the close frame")
	}
}

// TestWriteInterval: with WriteInterval, a session's subscribers are
// written at most once per interval: a paced stream arrives in few
// messages, its deltas folded, numbered without a gap, and whole.
func TestWriteInterval(t *testing.T) {
	const interval = 100 * time.Millisecond
	s := newServer(t, serverOpts{Speed: model.Paced(time.Millisecond), WriteInterval: interval})
	sid := s.createSession()
	w := s.subscribe(sid)
	mir := newMirror(t)
	messages := 0
	var began time.Time
	s.say(sid, "scenario:text chars=3000 delta=5") // 600 deltas, ~0.6 s or more
	for done := false; !done; {
		frames, err := w.read(30 * time.Second)
		if err != nil {
			t.Fatalf("read after seq %d: %v", w.lastSeq, err)
		}
		if messages == 0 {
			began = time.Now()
		}
		messages++
		mir.apply(frames)
		done = slices.ContainsFunc(frames, agentDone)
	}
	took := time.Since(began)
	msgs := s.waitIdle(sid, 2)
	for _, m := range msgs {
		if got := mir.msgs[m.MessageID]; got == nil || textOf(*got) != textOf(m) {
			t.Fatalf("subscription view of #%d differs from the snapshot", m.Sequence)
		}
	}
	// The hello and the turn's first frames at once (nothing was sent for
	// an interval before them), then at most one per interval.
	if most := 3 + int(took/interval); messages > most {
		t.Fatalf("%d messages in %s, at most %d with a %s interval", messages, took, most, interval)
	}
	if mir.deltas >= 600 {
		t.Fatalf("%d delta frames: nothing folded", mir.deltas)
	}
}
