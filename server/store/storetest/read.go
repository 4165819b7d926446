package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// fill commits n messages after the session's head; every message whose
// sequence is a multiple of internalEvery (if > 0) is internal.
func fill(t testing.TB, s store.Store, sessionID string, from, n int64, internalEvery int64) {
	t.Helper()
	var batch []synccore.Message
	for seq := from; seq < from+n; seq++ {
		var m synccore.Message
		if seq%2 == 1 {
			m = UserMessage(sessionID, seq, "question")
		} else {
			m = AgentMessage(sessionID, seq, TextPart(1, "done", "answer"), TextPart(2, "done", "more"))
			m.State = synccore.MessageDone
		}
		if internalEvery > 0 && seq%internalEvery == 0 {
			m.Visibility = synccore.VisibilityInternal
		}
		batch = append(batch, m)
		if len(batch) == 100 {
			MustCommit(t, s, sessionID, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		MustCommit(t, s, sessionID, batch...)
	}
}

func testMessagesEmptySession(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "s")
	for _, q := range []store.PageQuery{{Limit: 50}, {Limit: 1, BeforeSequence: 7}, {Limit: 200, IncludeInternal: true}} {
		p := page(t, s, "s", q)
		if p.Items == nil || len(p.Items) != 0 || p.Total != 0 || p.HasMore || p.StartSequence != 0 ||
			p.EndSequence != 0 || p.NextBeforeSequence != 0 {
			t.Fatalf("empty session page %+v = %#v", q, p)
		}
	}
	_, err := s.Messages(context.Background(), "missing", store.PageQuery{Limit: 50})
	WantCode(t, err, synccore.CodeNotFound)
	_, err = s.History(context.Background(), "missing")
	WantCode(t, err, synccore.CodeNotFound)
}

func testMessagesExactPages(t *testing.T, open Opener) {
	for _, n := range []int{50, 200} {
		s := open(t, fmt.Sprint("pages", n))
		NewSession(t, s, "s")
		fill(t, s, "s", 1, int64(n), 0)

		p := page(t, s, "s", store.PageQuery{Limit: n})
		if len(p.Items) != n || p.HasMore || p.NextBeforeSequence != 0 || p.Total != int64(n) ||
			p.StartSequence != 1 || p.EndSequence != int64(n) {
			t.Fatalf("n=%d limit=n: total=%d items=%d has_more=%v next=%d start=%d end=%d",
				n, p.Total, len(p.Items), p.HasMore, p.NextBeforeSequence, p.StartSequence, p.EndSequence)
		}
		if !slices.IsSorted(sequences(p.Items)) {
			t.Fatal("items not oldest first")
		}
		for _, m := range p.Items {
			if want := 1 + int(m.Sequence+1)%2; len(m.Parts) != want {
				t.Fatalf("message %d has %d parts, want %d", m.Sequence, len(m.Parts), want)
			}
		}

		p = page(t, s, "s", store.PageQuery{Limit: n - 1})
		if len(p.Items) != n-1 || !p.HasMore || p.NextBeforeSequence != 2 || p.StartSequence != 2 {
			t.Fatalf("n=%d limit=n-1: %+v", n, p)
		}
		p = page(t, s, "s", store.PageQuery{Limit: n, BeforeSequence: p.NextBeforeSequence})
		if len(p.Items) != 1 || p.Items[0].Sequence != 1 || p.HasMore || p.Total != int64(n) {
			t.Fatalf("n=%d last page: %+v", n, p)
		}
	}
}

func testMessagesBeforeEdges(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "s")
	fill(t, s, "s", 1, 10, 0)

	// before the first message: nothing, nothing older.
	p := page(t, s, "s", store.PageQuery{Limit: 50, BeforeSequence: 1})
	if len(p.Items) != 0 || p.HasMore || p.Total != 10 || p.StartSequence != 0 {
		t.Fatalf("before=1: %+v", p)
	}
	p = page(t, s, "s", store.PageQuery{Limit: 50, BeforeSequence: 2})
	if got := sequences(p.Items); !slices.Equal(got, []int64{1}) || p.HasMore {
		t.Fatalf("before=2: %v has_more=%v", got, p.HasMore)
	}
	// past the head means "up to the head".
	p = page(t, s, "s", store.PageQuery{Limit: 3, BeforeSequence: 1000})
	if got := sequences(p.Items); !slices.Equal(got, []int64{8, 9, 10}) || !p.HasMore || p.NextBeforeSequence != 8 {
		t.Fatalf("before=1000: %v %+v", got, p)
	}
	p = page(t, s, "s", store.PageQuery{Limit: 3, BeforeSequence: 5})
	if got := sequences(p.Items); !slices.Equal(got, []int64{2, 3, 4}) || !p.HasMore || p.NextBeforeSequence != 2 {
		t.Fatalf("before=5: %v %+v", got, p)
	}
	// A limit over the maximum is capped rather than unbounded.
	fill(t, s, "s", 11, 250, 0)
	if p := page(t, s, "s", store.PageQuery{Limit: 10_000}); len(p.Items) != synccore.MaxPageLimit {
		t.Fatalf("limit 10000 gave %d items", len(p.Items))
	}
}

func testMessagesInternal(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "s")
	fill(t, s, "s", 1, 30, 3) // 3, 6, ..., 30 are internal: 10 of 30

	p := page(t, s, "s", store.PageQuery{Limit: 50})
	// total is every message the session created; include_internal filters
	// the items only (the seed).
	if p.Total != 30 || len(p.Items) != 20 || p.HasMore {
		t.Fatalf("visible: total=%d items=%d", p.Total, len(p.Items))
	}
	for _, m := range p.Items {
		if m.Visibility != synccore.VisibilityVisible || m.Sequence%3 == 0 {
			t.Fatalf("internal message %d on a visible page", m.Sequence)
		}
		if wantParts := 1 + int(m.Sequence+1)%2; len(m.Parts) != wantParts {
			t.Fatalf("message %d has %d parts (parts of hidden neighbours leaked?)", m.Sequence, len(m.Parts))
		}
	}
	p = page(t, s, "s", store.PageQuery{Limit: 50, IncludeInternal: true})
	if p.Total != 30 || len(p.Items) != 30 {
		t.Fatalf("include_internal: total=%d items=%d", p.Total, len(p.Items))
	}
	// Visible pages of 4, newest first: 29 28 26 25 | 23 22 20 19 | ...
	p = page(t, s, "s", store.PageQuery{Limit: 4})
	if got := sequences(p.Items); !slices.Equal(got, []int64{25, 26, 28, 29}) || p.NextBeforeSequence != 25 {
		t.Fatalf("visible page: %v next=%d", got, p.NextBeforeSequence)
	}
	// A page whose only older messages are internal has no more visible ones.
	p = page(t, s, "s", store.PageQuery{Limit: 2, BeforeSequence: 4})
	if got := sequences(p.Items); !slices.Equal(got, []int64{1, 2}) || p.HasMore {
		t.Fatalf("before=4: %v has_more=%v", got, p.HasMore)
	}
	h, err := s.History(context.Background(), "s")
	if err != nil || len(h) != 30 || !slices.Equal(sequences(h), sequences(page(t, s, "s", store.PageQuery{Limit: 50, IncludeInternal: true}).Items)) {
		t.Fatalf("History: %d messages, %v", len(h), err)
	}
}

// walk reads the whole history page by page the way a client does and
// returns the sequences in the order the client would hold them.
func walk(t testing.TB, s store.Store, sessionID string, limit int, internal bool) (seqs []int64, total int64) {
	t.Helper()
	q := store.PageQuery{Limit: limit, IncludeInternal: internal}
	for {
		p := page(t, s, sessionID, q)
		seqs = append(sequences(p.Items), seqs...)
		total = p.Total
		if !p.HasMore {
			return seqs, total
		}
		if p.NextBeforeSequence == 0 || (q.BeforeSequence != 0 && p.NextBeforeSequence >= q.BeforeSequence) {
			t.Fatalf("walk does not progress: %+v after %+v", p, q)
		}
		q.BeforeSequence = p.NextBeforeSequence
	}
}

func testMessagesWalkReachesEveryMessageOnce(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "s")
	fill(t, s, "s", 1, 457, 5)
	for _, limit := range []int{1, 7, 50, 200} {
		for _, internal := range []bool{false, true} {
			seqs, total := walk(t, s, "s", limit, internal)
			var want []int64
			for seq := int64(1); seq <= 457; seq++ {
				if internal || seq%5 != 0 {
					want = append(want, seq)
				}
			}
			// total is every message created, whatever the filter.
			if !slices.Equal(seqs, want) || total != 457 {
				t.Fatalf("limit=%d internal=%v: walked %d messages (total %d), want %d (total 457)", limit, internal, len(seqs), total, len(want))
			}
		}
	}
}
