package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// exchange posts n user messages one after the other, each answered
// before the next, so the session ends with 2n messages.
func (s *testServer) exchange(sid string, n int) {
	s.t.Helper()
	for i := 0; i < n; i++ {
		m := s.say(sid, fmt.Sprintf("message %d", i))
		s.waitIdle(sid, int(m.Sequence)+1)
	}
}

// checkPage asserts the shape every page must have.
func checkPage(t testing.TB, p synccore.MessagePage, wantItems int, wantFirst int64, wantMore bool) {
	t.Helper()
	if p.Items == nil || len(p.Items) != wantItems || p.HasMore != wantMore {
		t.Fatalf("page: %d items (want %d), has_more %v (want %v)", len(p.Items), wantItems, p.HasMore, wantMore)
	}
	if wantItems == 0 {
		if p.StartSequence != 0 || p.EndSequence != 0 || p.NextBeforeSequence != 0 {
			t.Fatalf("empty page with sequences %+v", p)
		}
		return
	}
	for i := 1; i < len(p.Items); i++ {
		if p.Items[i].Sequence <= p.Items[i-1].Sequence {
			t.Fatalf("items not oldest first at %d", i)
		}
	}
	if p.StartSequence != p.Items[0].Sequence || p.EndSequence != p.Items[len(p.Items)-1].Sequence || p.StartSequence != wantFirst {
		t.Fatalf("start %d end %d, items %d..%d, want first %d", p.StartSequence, p.EndSequence,
			p.Items[0].Sequence, p.Items[len(p.Items)-1].Sequence, wantFirst)
	}
	if wantMore && p.NextBeforeSequence != p.StartSequence {
		t.Fatalf("next_before_sequence %d, want %d", p.NextBeforeSequence, p.StartSequence)
	}
	if !wantMore && p.NextBeforeSequence != 0 {
		t.Fatalf("next_before_sequence %d on the last page", p.NextBeforeSequence)
	}
}

func TestPagination(t *testing.T) {
	s := newServer(t, serverOpts{})

	t.Run("empty session", func(t *testing.T) {
		sid := s.createSession()
		p := s.page(sid, "")
		checkPage(t, p, 0, 0, false)
		if p.Total != 0 {
			t.Fatalf("total %d", p.Total)
		}
		// JSON clients get [] rather than null.
		r := s.do("GET", "/v1/sessions/"+sid+"/messages", nil)
		r.expect(t, http.StatusOK, nil)
		if want := `"items":[]`; !bytes.Contains(r.Body, []byte(want)) {
			t.Fatalf("empty page JSON %s lacks %s", r.Body, want)
		}
	})

	t.Run("exactly 50", func(t *testing.T) {
		sid := s.createSession()
		s.exchange(sid, 25)
		p := s.page(sid, "")
		checkPage(t, p, 50, 1, false)
		if p.Total != 50 {
			t.Fatalf("total %d", p.Total)
		}
		checkPage(t, s.page(sid, "limit=49"), 49, 2, true)
	})

	t.Run("202 messages", func(t *testing.T) {
		sid := s.createSession()
		s.exchange(sid, 101)
		p := s.page(sid, "")
		checkPage(t, p, 50, 153, true)
		if p.Total != 202 {
			t.Fatalf("total %d", p.Total)
		}
		checkPage(t, s.page(sid, "limit=500"), 200, 3, true) // capped at 200
		checkPage(t, s.page(sid, "limit=200"), 200, 3, true)
		checkPage(t, s.page(sid, "limit=200&before_sequence=201"), 200, 1, false) // exactly 200 older
		checkPage(t, s.page(sid, "limit=2&before_sequence=3"), 2, 1, false)
		checkPage(t, s.page(sid, "before_sequence=2"), 1, 1, false)
		checkPage(t, s.page(sid, "before_sequence=1"), 0, 0, false) // before the first message
		checkPage(t, s.page(sid, "before_sequence=100000"), 50, 153, true)
		// Walking back page by page yields every message exactly once.
		all := s.all(sid, false)
		if len(all) != 202 {
			t.Fatalf("walked %d messages", len(all))
		}
		for i, m := range all {
			if m.Sequence != int64(i+1) {
				t.Fatalf("message %d has sequence %d", i, m.Sequence)
			}
		}
	})

	t.Run("internal hidden and shown", func(t *testing.T) {
		sid := s.createSession()
		s.exchange(sid, 1)
		var im synccore.Message
		body := map[string]any{"visibility": "internal", "parts": []map[string]any{{"type": "text", "text": "recovery prompt"}}}
		s.do("POST", "/v1/sessions/"+sid+"/messages", body).expect(t, http.StatusCreated, &im)
		if im.Visibility != synccore.VisibilityInternal {
			t.Fatalf("internal message came back %q", im.Visibility)
		}
		// An internal message starts a turn like any other: 4 messages.
		full := s.waitIdle(sid, 4)
		var visible int
		for _, m := range full {
			if m.Visibility == synccore.VisibilityVisible {
				visible++
			}
		}
		hidden := s.page(sid, "")
		shown := s.page(sid, "include_internal=true")
		if len(shown.Items) != len(full) || shown.Total != int64(len(full)) {
			t.Fatalf("include_internal: %d items total %d, want %d", len(shown.Items), shown.Total, len(full))
		}
		// total counts every message the session created (the seed), not
		// the visible ones: include_internal filters the items only.
		if len(hidden.Items) != visible || hidden.Total != int64(len(full)) {
			t.Fatalf("visible only: %d items total %d, want %d items total %d", len(hidden.Items), hidden.Total, visible, len(full))
		}
		for _, m := range hidden.Items {
			if m.Visibility != synccore.VisibilityVisible {
				t.Fatalf("internal message %d in a default read", m.Sequence)
			}
		}
	})

	t.Run("total while messages are added", func(t *testing.T) {
		sid := s.createSession()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				s.do("POST", "/v1/sessions/"+sid+"/messages", textParts(fmt.Sprintf("burst %d", i)))
			}
		}()
		var lastTotal int64
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for reading := true; reading; {
			select {
			case <-done:
				reading = false
			default:
			}
			p := s.page(sid, "limit=10&include_internal=1")
			if p.Total < lastTotal {
				t.Fatalf("total went back from %d to %d", lastTotal, p.Total)
			}
			lastTotal = p.Total
			if int64(len(p.Items)) > p.Total {
				t.Fatalf("%d items but total %d", len(p.Items), p.Total)
			}
			if len(p.Items) > 0 && p.EndSequence != p.Total {
				// The head page ends at the newest message, whose
				// sequence is the number of messages created.
				t.Fatalf("head page ends at %d, total %d", p.EndSequence, p.Total)
			}
		}
		// Once every burst message is answered, total counts exactly the
		// messages there are. Read both until they come from the same
		// moment: between turns the next agent message may still be made.
		deadline := time.Now().Add(30 * time.Second)
		for {
			msgs := s.waitFor(sid, 60*time.Second, "every burst message answered", func(msgs []synccore.Message) bool {
				return noneStreaming(msgs) && countRole(msgs, synccore.RoleUser) == 20
			})
			p := s.page(sid, "include_internal=1")
			if p.Total == int64(len(msgs)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("final total %d, history has %d", p.Total, len(msgs))
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func countRole(msgs []synccore.Message, r synccore.Role) int {
	n := 0
	for _, m := range msgs {
		if m.Role == r {
			n++
		}
	}
	return n
}
