package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// treeSession is the model of one session of a random tree.
type treeSession struct {
	id      string
	born    int // creation order
	path    []synccore.Message
	own     int64 // first sequence of its own messages
	deleted bool
}

// testPropertyRandomTrees grows random conversation trees (messages,
// revisions, forks at random points, edits and regenerations as forks,
// deletes) against a model: after every step every live session's path
// walks back (random page sizes, internal or not) as the model's one
// ordered list, gapless, each message with its ids, sequence and latest
// revision, carrying the session read; no fork ever sees a change to its
// prefix; deleted sessions are gone; and the alternatives at random
// positions are the brute-force ones.
func testPropertyRandomTrees(t *testing.T, open Opener) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { treeRun(t, open, seed) })
	}
}

func treeRun(t *testing.T, open Opener, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	s := open(t, "main")
	var all []*treeSession
	newID := 0
	live := func() []*treeSession {
		var out []*treeSession
		for _, x := range all {
			if !x.deleted {
				out = append(out, x)
			}
		}
		return out
	}
	root := &treeSession{id: "t0", own: 1}
	NewSession(t, s, root.id)
	all = append(all, root)
	forks, deletes, revisions := 0, 0, 0

	for step := range 120 {
		ls := live()
		if len(ls) == 0 {
			x := &treeSession{id: fmt.Sprint("t", len(all)), born: len(all), own: 1}
			NewSession(t, s, x.id)
			all = append(all, x)
			continue
		}
		x := ls[rng.IntN(len(ls))]
		head := int64(len(x.path))
		switch op := rng.IntN(10); {
		case op < 4: // a new message
			newID++
			var m synccore.Message
			if rng.IntN(2) == 0 {
				m = user(x.id, fmt.Sprint("m", newID), head+1, fmt.Sprint("u", newID))
			} else {
				m = AgentMessage(x.id, head+1, TextPart(1, "streaming", "a"))
				m.MessageID = fmt.Sprint("m", newID)
				if rng.IntN(2) == 0 {
					m.State = synccore.MessageDone
					m.Parts[0].State = "done"
				}
			}
			if rng.IntN(5) == 0 {
				m.Visibility = synccore.VisibilityInternal
			}
			MustCommit(t, s, x.id, m)
			m.CreatedAt = 0
			x.path = append(x.path, m)
		case op < 6: // a revision of a streaming message of a session's own
			type at struct {
				x *treeSession
				i int
			}
			var st []at
			for _, y := range ls {
				for i := y.own - 1; i < int64(len(y.path)); i++ {
					if y.path[i].Role == synccore.RoleAgent && y.path[i].State == synccore.MessageStreaming {
						st = append(st, at{y, int(i)})
					}
				}
			}
			if len(st) == 0 {
				continue
			}
			pick := st[rng.IntN(len(st))]
			x, i := pick.x, pick.i
			m := x.path[i]
			m.Revision++
			n := int64(len(m.Parts))
			m.Parts = []synccore.Part{TextPart(n+1, "streaming", fmt.Sprint("r", m.Revision))}
			if rng.IntN(2) == 0 {
				m.State = synccore.MessageDone
			}
			MustCommit(t, s, x.id, m)
			m.Parts = mergeParts(x.path[i].Parts, m.Parts)
			x.path[i] = m
			revisions++
		case op < 9: // a fork (edit, regenerate, fork from here)
			before := 2 + rng.Int64N(max(head, 1))
			if rng.IntN(8) == 0 {
				before = []int64{0, 1, head + 2}[rng.IntN(3)]
			}
			f := &treeSession{id: fmt.Sprint("t", len(all)), born: len(all), own: before}
			_, err := s.ForkSession(ctx, x.id, before, store.Session{SessionID: f.id, Model: "m", ApprovalMode: "ask"})
			switch {
			case before < 2 || before > head+1:
				WantCode(t, err, synccore.CodeBadRequest)
				continue
			case slices.ContainsFunc(x.path[:before-1], func(m synccore.Message) bool { return m.State == synccore.MessageStreaming }):
				WantCode(t, err, synccore.CodeConflict)
				continue
			case err != nil:
				t.Fatalf("step %d: fork %s before %d: %v", step, x.id, before, err)
			}
			f.path = slices.Clone(x.path[:before-1])
			all = append(all, f)
			forks++
		default: // a delete
			if rng.IntN(2) == 0 {
				continue
			}
			if err := s.DeleteSession(ctx, x.id); err != nil {
				t.Fatalf("step %d: delete %s: %v", step, x.id, err)
			}
			x.deleted = true
			deletes++
		}
		checkTree(t, s, rng, step, all)
	}
	if forks < 10 || deletes < 2 || revisions < 3 {
		t.Errorf("weak run: %d forks, %d deletes, %d revisions", forks, deletes, revisions)
	}
}

func checkTree(t *testing.T, s store.Store, rng *rand.Rand, step int, all []*treeSession) {
	t.Helper()
	ctx := context.Background()
	for _, x := range all {
		if x.deleted {
			_, err := s.Session(ctx, x.id)
			WantCode(t, err, synccore.CodeNotFound)
			continue
		}
		internal := rng.IntN(2) == 0
		limit := 1 + rng.IntN(7)
		got := walkMessages(t, s, x.id, limit, internal)
		var want []synccore.Message
		for _, m := range x.path {
			if internal || m.Visibility == synccore.VisibilityVisible {
				m.SessionID = x.id
				want = append(want, m)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("step %d: %s walked %v, want %v", step, x.id, ids(got), ids(want))
		}
		for i := range want {
			g := got[i]
			g.CreatedAt = 0
			if !reflect.DeepEqual(normalise(g), normalise(want[i])) {
				t.Fatalf("step %d: %s message %d differs:\n got %+v\nwant %+v", step, x.id, want[i].Sequence, g, want[i])
			}
		}
		if p := page(t, s, x.id, store.PageQuery{Limit: 1}); p.Total != int64(len(x.path)) {
			t.Fatalf("step %d: %s total %d, want %d", step, x.id, p.Total, len(x.path))
		}
	}
	// Alternatives at a random position of a random live session.
	var ls []*treeSession
	for _, x := range all {
		if !x.deleted {
			ls = append(ls, x)
		}
	}
	if len(ls) == 0 {
		return
	}
	x := ls[rng.IntN(len(ls))]
	n := 1 + rng.Int64N(int64(len(x.path))+1)
	bs, err := s.Branches(ctx, x.id, n)
	if err != nil {
		t.Fatalf("step %d: Branches(%s, %d): %v", step, x.id, n, err)
	}
	want := bruteBranches(all, x, n)
	var got []string
	for _, b := range bs {
		id := ""
		if b.Message != nil {
			id = b.Message.MessageID
		}
		got = append(got, id)
		// The session showing an alternative is live and its path takes it.
		var shower *treeSession
		for _, y := range ls {
			if y.id == b.SessionID {
				shower = y
			}
		}
		if shower == nil {
			t.Fatalf("step %d: Branches(%s, %d) names %q, not a live session", step, x.id, n, b.SessionID)
		}
		if id != "" && (int64(len(shower.path)) < n || shower.path[n-1].MessageID != id) {
			dumpTree(t, all)
			t.Fatalf("step %d: Branches(%s, %d): %s does not show %s at %d", step, x.id, n, b.SessionID, id, n)
		}
	}
	if !slices.Equal(got, want) {
		dumpTree(t, all)
		t.Fatalf("step %d: Branches(%s, %d) = %v, want %v", step, x.id, n, got, want)
	}
	counts, err := s.BranchCounts(ctx, x.id, 1, int64(len(x.path))+1)
	if err != nil {
		t.Fatal(err)
	}
	var wantCounts []store.BranchCount
	for k := int64(2); k <= int64(len(x.path))+1; k++ {
		alts := bruteBranches(all, x, k)
		if len(alts) > 1 {
			mine := ""
			if k <= int64(len(x.path)) {
				mine = x.path[k-1].MessageID
			}
			wantCounts = append(wantCounts, store.BranchCount{Sequence: k, Count: len(alts), Index: slices.Index(alts, mine)})
		}
	}
	if !slices.Equal(counts, wantCounts) {
		dumpTree(t, all)
		t.Fatalf("step %d: BranchCounts(%s) = %+v, want %+v", step, x.id, counts, wantCounts)
	}
}

// bruteBranches: the distinct messages at n of the live sessions whose
// path shares x's before n, ordered by the birth of the session that made
// each; "" stands for x's own nothing at n.
func bruteBranches(all []*treeSession, x *treeSession, n int64) []string {
	born := map[string]int{}
	prefix := ids(x.path[:n-1])
	for _, y := range all {
		if y.deleted || int64(len(y.path)) < n || !slices.Equal(ids(y.path[:n-1]), prefix) {
			continue
		}
		id := y.path[n-1].MessageID
		// The maker: the oldest session holding it at n (forks are younger).
		b := y.born
		for _, z := range all {
			if int64(len(z.path)) >= n && z.path[n-1].MessageID == id && z.born < b {
				b = z.born
			}
		}
		born[id] = b
	}
	if int64(len(x.path)) < n {
		born[""] = x.born
	}
	out := make([]string, 0, len(born))
	for id := range born {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b string) int { return born[a] - born[b] })
	return out
}

func dumpTree(t *testing.T, all []*treeSession) {
	for _, x := range all {
		t.Logf("%s own %d deleted %v: %v", x.id, x.own, x.deleted, ids(x.path))
	}
}
