package bindings

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// textCopy is what a renderer that only ever appends would hold: the text
// of every part, rebuilt from Watch's updates alone (whole messages and
// parts, then appended text), never from the view's texts.
type textCopy struct {
	mu       sync.Mutex
	parts    map[string][]string // message id -> part texts by index
	appends  int
	rewrites int // a known part's or message's text sent whole again
	resets   int
	err      string
}

func (tc *textCopy) apply(u Update) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	ch := u.Changes
	if ch.Reset {
		tc.resets++
		tc.parts = map[string][]string{}
	}
	for _, mc := range ch.Messages {
		if mc.Message != nil {
			if _, known := tc.parts[mc.MessageID]; known {
				tc.rewrites++
			}
			texts := make([]string, len(mc.Message.Parts))
			for i, p := range mc.Message.Parts {
				texts[i] = p.Text
			}
			tc.parts[mc.MessageID] = texts
			continue
		}
		texts, ok := tc.parts[mc.MessageID]
		if !ok {
			tc.err = "patch of a message the copy lacks: " + mc.MessageID
			return
		}
		for _, pc := range mc.Parts {
			if pc.Index == len(texts) {
				texts = append(texts, pc.Part.Text)
			} else {
				texts[pc.Index] = pc.Part.Text
				tc.rewrites++
			}
		}
		for _, a := range mc.Appends {
			texts[a.Index] += a.Text
			tc.appends++
		}
		tc.parts[mc.MessageID] = texts
	}
}

// TestWatchAppendsRebuildTheText follows a long answer through connection
// cuts with the WebAssembly core: the text rebuilt from the reported
// appends alone equals the view's, and almost every update was an append
// (the incremental render was used, not whole re-reads).
func TestWatchAppendsRebuildTheText(t *testing.T) {
	srv := startServer(t, model.Paced(50*time.Microsecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api := &API{BaseURL: srv.URL}
	sess, err := api.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Runtime: testRuntime(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := &textCopy{parts: map[string][]string{}}
	stop := c.Watch(tc.apply)
	defer stop()

	sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:long chars=60000 delta=8"})
	if err != nil {
		t.Fatal(err)
	}
	done := func(v View) bool {
		last, ok := v.Messages.Last()
		return ok && last.Sequence > sent.Sequence && last.Done()
	}
	for cut := 0; cut < 3; cut++ {
		// Cut once some text has streamed, three times.
		if err := c.WaitFor(ctx, func(v View) bool {
			last, ok := v.Messages.Last()
			return done(v) || (ok && last.Sequence > sent.Sequence && textLen(last) > (cut+1)*12000)
		}); err != nil {
			t.Fatal(err)
		}
		if err := c.cutConnection(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitFor(ctx, done); err != nil {
		t.Fatal(err)
	}
	// The watcher runs on its own goroutine: wait until it saw the final view.
	deadline := time.Now().Add(10 * time.Second)
	v := c.View()
	for {
		tc.mu.Lock()
		same := tc.err == "" && sameTexts(tc.parts, v)
		tc.mu.Unlock()
		if same || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.err != "" {
		t.Fatal(tc.err)
	}
	if !sameTexts(tc.parts, v) {
		t.Fatalf("text rebuilt from the updates differs from the view's")
	}
	if last, _ := v.Messages.Last(); textLen(last) < 60000 {
		t.Fatalf("answer has %d characters, want 60000", textLen(last))
	}
	// How many updates a 7,500-delta answer takes depends on the machine's
	// load (the watcher and the subscription fold what arrives while they are
	// busy), so the test counts kinds, not updates: the text must have grown
	// by appends, with a part or message sent whole again only rarely (a
	// reconnect's snapshot).
	if tc.appends < 10 || tc.rewrites*10 > tc.appends {
		t.Fatalf("%d appends and %d whole rewrites: the view was not patched incrementally", tc.appends, tc.rewrites)
	}
	t.Logf("%d appends, %d rewrites, %d resets", tc.appends, tc.rewrites, tc.resets)
}

func textLen(m *synccore.Message) int {
	n := 0
	for _, p := range m.Parts {
		n += len(p.Text)
	}
	return n
}

func sameTexts(parts map[string][]string, v View) bool {
	if len(parts) != v.Messages.Len() {
		return false
	}
	for _, m := range v.Messages.All() {
		texts := parts[m.MessageID]
		if len(texts) != len(m.Parts) {
			return false
		}
		for i, p := range m.Parts {
			if texts[i] != p.Text {
				return false
			}
		}
	}
	return true
}
