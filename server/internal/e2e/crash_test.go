package e2e

import (
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/synccore"
)

// TestCrashRecovery: SIGKILL the real binary in the middle of a stream,
// restart it on the same SQLite file, and check every committed message is
// still there and nothing is left streaming.
func TestCrashRecovery(t *testing.T) {
	bin := buildServer(t)
	db := filepath.Join(t.TempDir(), "crash.db")

	p := startProc(t, bin, "-db", db, "-speed", "2ms", "-log-level", "warn")
	s := p.client(t)
	sid := s.createSession()
	s.say(sid, "scenario:tools city=Lima")
	s.waitIdle(sid, 2)
	s.say(sid, "scenario:approval")
	s.answer(sid, s.pendingInteraction(sid).InteractionID, map[string]any{"approved": true}).expect(t, 200, nil)
	s.waitIdle(sid, 4)

	// A long stream, killed once deltas flow.
	s.say(sid, "scenario:long chars=200000")
	w := s.subscribe(sid)
	mir := newMirror(t)
	follow(t, w, mir, func(synccore.Frame) bool { return mir.deltas >= 50 })
	before := s.all(sid, true)
	if before[len(before)-1].State != synccore.MessageStreaming {
		t.Fatalf("the last message should be streaming before the kill: %s", summary(before))
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 10*time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("process ended with %v, want killed", err)
	}

	p2 := startProc(t, bin, "-db", db, "-speed", "0", "-log-level", "warn")
	s2 := p2.client(t)
	after := s2.all(sid, true)
	if len(after) != len(before) {
		t.Fatalf("%d messages before the kill, %d after: %s", len(before), len(after), summary(after))
	}
	for i, b := range before {
		a := after[i]
		if a.MessageID != b.MessageID || a.Sequence != b.Sequence {
			t.Fatalf("message %d changed identity", i)
		}
		if b.Done() {
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("done message #%d changed across the crash", b.Sequence)
			}
			continue
		}
		// The interrupted message: closed, with its committed parts kept
		// and an error part appended.
		if a.Revision <= b.Revision {
			t.Fatalf("recovered message revision %d, was %d", a.Revision, b.Revision)
		}
		checkClosed(t, a)
		if len(a.Parts) < len(b.Parts)+1 || a.Parts[len(a.Parts)-1].Type != synccore.PartError {
			t.Fatalf("recovered message lacks a final error part: %s", summary([]synccore.Message{a}))
		}
	}
	if !noneStreaming(after) {
		t.Fatalf("a message is still streaming after recovery: %s", summary(after))
	}

	// The restarted server works on the same session.
	s2.say(sid, "back again")
	final := s2.waitIdle(sid, len(after)+2)
	if !strings.Contains(textOf(final[len(final)-1]), "back again") {
		t.Fatalf("no reply after restart: %s", summary(final))
	}
}

// TestGracefulShutdown: SIGTERM stops the binary cleanly; the message
// that was streaming is closed with an error part before exit, so a
// restart has nothing to recover.
func TestGracefulShutdown(t *testing.T) {
	bin := buildServer(t)
	db := filepath.Join(t.TempDir(), "term.db")
	p := startProc(t, bin, "-db", db, "-speed", "2ms", "-log-level", "warn")
	s := p.client(t)
	sid := s.createSession()
	s.say(sid, "scenario:long chars=200000")
	w := s.subscribe(sid)
	mir := newMirror(t)
	follow(t, w, mir, func(synccore.Frame) bool { return mir.deltas >= 20 })

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The subscriber sees the closing snapshot, then a close frame.
	var closing *synccore.Message
	for {
		frames, err := w.read(20 * time.Second)
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
				t.Fatalf("subscription ended with %v, want close 1001", err)
			}
			break
		}
		mir.apply(frames)
		for _, f := range frames {
			if agentDone(f) {
				closing = f.Message
			}
		}
	}
	if err := p.wait(t, 20*time.Second); err != nil {
		t.Fatalf("graceful exit: %v", err)
	}
	if closing == nil || len(partsOf(*closing, synccore.PartError)) != 1 {
		t.Fatal("no closing snapshot with an error part before the close")
	}

	p2 := startProc(t, bin, "-db", db, "-log-level", "warn")
	after := p2.client(t).all(sid, true)
	if len(after) != 2 || !noneStreaming(after) || after[1].Revision != closing.Revision {
		t.Fatalf("after restart: %s (closing revision %d)", summary(after), closing.Revision)
	}
}
