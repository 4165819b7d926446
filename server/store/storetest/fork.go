package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// forkSuite are the conversation tree's tests (store.Forker), run by Run.
var forkSuite = []struct {
	name string
	fn   func(*testing.T, Opener)
}{
	{"ForkReadsThePrefixByReference", testForkReadsThePrefix},
	{"ForkRules", testForkRules},
	{"ForkBranches", testForkBranches},
	{"ForkDeleteKeepsWhatForksShare", testForkDelete},
	{"ForkSummariesAlongThePath", testForkSummaries},
	{"PropertyRandomTrees", testPropertyRandomTrees},
}

// MustFork forks parent before before as id and fails the test on error.
func MustFork(t testing.TB, s store.Store, parent string, before int64, id string) store.Session {
	t.Helper()
	sess, err := s.ForkSession(context.Background(), parent, before, store.Session{SessionID: id, Model: "scripted", ApprovalMode: "ask"})
	if err != nil {
		t.Fatalf("ForkSession(%q, %d, %q): %v", parent, before, id, err)
	}
	return sess
}

// doneAgent is agent message id at seq, done.
func doneAgent(sessionID, id string, seq int64, text string) synccore.Message {
	m := AgentMessage(sessionID, seq, TextPart(1, "done", text))
	m.MessageID, m.State = id, synccore.MessageDone
	return m
}

func user(sessionID, id string, seq int64, text string) synccore.Message {
	m := UserMessage(sessionID, seq, text)
	m.MessageID = id
	return m
}

func ids(msgs []synccore.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

func testForkReadsThePrefix(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "root")
	for i := int64(1); i <= 6; i += 2 {
		MustCommit(t, s, "root", user("root", fmt.Sprint("r", i), i, "q"), doneAgent("root", fmt.Sprint("r", i+1), i+1, "a"))
	}
	f := MustFork(t, s, "root", 5, "f")
	if f.ParentSessionID != "root" || f.ForkSequence != 5 || f.RootSessionID != "root" || f.HeadSequence != 4 {
		t.Fatalf("fork = %+v, want parent root, fork_sequence 5, root root, head 4", f)
	}
	if r, _ := s.Session(ctx, "root"); r.RootSessionID != "root" || r.ParentSessionID != "" || r.ForkSequence != 0 {
		t.Fatalf("root = %+v, want its own root and no parent", r)
	}
	p := page(t, s, "f", store.PageQuery{})
	if !slices.Equal(ids(p.Items), []string{"r1", "r2", "r3", "r4"}) || p.Total != 4 || p.StartSequence != 1 || p.EndSequence != 4 {
		t.Fatalf("fork page = %v total %d [%d..%d], want r1..r4 total 4", ids(p.Items), p.Total, p.StartSequence, p.EndSequence)
	}
	for _, m := range p.Items {
		if m.SessionID != "f" || len(m.Parts) != 1 {
			t.Fatalf("shared message %s carries session %q with %d parts, want f with 1", m.MessageID, m.SessionID, len(m.Parts))
		}
	}
	// The fork's own messages continue the numbering; the root is untouched.
	MustCommit(t, s, "f", user("f", "f5", 5, "edited"))
	WantCode(t, s.Commit(ctx, "f", []synccore.Message{user("f", "f7", 7, "gap")}), synccore.CodeConflict)
	MustCommit(t, s, "f", doneAgent("f", "f6", 6, "new answer"))
	if got := ids(page(t, s, "f", store.PageQuery{}).Items); !slices.Equal(got, []string{"r1", "r2", "r3", "r4", "f5", "f6"}) {
		t.Fatalf("fork path = %v", got)
	}
	if got := ids(page(t, s, "root", store.PageQuery{}).Items); !slices.Equal(got, []string{"r1", "r2", "r3", "r4", "r5", "r6"}) {
		t.Fatalf("root path = %v", got)
	}
	// Pages along the path: a page boundary inside the prefix.
	q := store.PageQuery{Limit: 3}
	p = page(t, s, "f", q)
	if !slices.Equal(ids(p.Items), []string{"r4", "f5", "f6"}) || !p.HasMore || p.NextBeforeSequence != 4 {
		t.Fatalf("first page = %v has_more %v next %d", ids(p.Items), p.HasMore, p.NextBeforeSequence)
	}
	q.BeforeSequence = 4
	if p = page(t, s, "f", q); !slices.Equal(ids(p.Items), []string{"r1", "r2", "r3"}) || p.HasMore {
		t.Fatalf("second page = %v has_more %v", ids(p.Items), p.HasMore)
	}
	// A fork of a fork, and the other reads.
	g := MustFork(t, s, "f", 6, "g")
	if g.RootSessionID != "root" || g.ParentSessionID != "f" {
		t.Fatalf("fork of fork = %+v", g)
	}
	hist, err := s.History(ctx, "g")
	if err != nil || !slices.Equal(ids(hist), []string{"r1", "r2", "r3", "r4", "f5"}) {
		t.Fatalf("History(g) = %v, %v", ids(hist), err)
	}
	rng, err := s.Range(ctx, "g", 4, 9)
	if err != nil || !slices.Equal(ids(rng), []string{"r4", "f5"}) {
		t.Fatalf("Range(g, 4, 9) = %v, %v", ids(rng), err)
	}
	m, err := s.Message(ctx, "g", "r2")
	if err != nil || m.SessionID != "g" || m.Sequence != 2 || len(m.Parts) != 1 {
		t.Fatalf("Message(g, r2) = %+v, %v", m, err)
	}
	_, err = s.Message(ctx, "g", "r5") // the root's, after the fork point
	WantCode(t, err, synccore.CodeNotFound)
	_, err = s.Message(ctx, "g", "f6") // f's, after g's fork point
	WantCode(t, err, synccore.CodeNotFound)
	// A message of the prefix can never be written through the fork.
	old := user("g", "r1", 1, "rewritten")
	old.Revision = 2
	if err := s.Commit(ctx, "g", []synccore.Message{old}); err == nil {
		t.Fatal("a commit rewriting a shared message through the fork was accepted")
	}
}

func testForkRules(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "r")
	MustCommit(t, s, "r", user("r", "a", 1, "q"), doneAgent("r", "b", 2, "x"), user("r", "c", 3, "q2"))
	streaming := AgentMessage("r", 4, TextPart(1, "streaming", "..."))
	streaming.MessageID = "d"
	MustCommit(t, s, "r", streaming)
	fork := func(before int64, id string) error {
		_, err := s.ForkSession(ctx, "r", before, store.Session{SessionID: id, Model: "m", ApprovalMode: "ask"})
		return err
	}
	WantCode(t, fork(1, "x1"), synccore.CodeBadRequest)
	WantCode(t, fork(0, "x2"), synccore.CodeBadRequest)
	WantCode(t, fork(6, "x3"), synccore.CodeBadRequest)
	WantCode(t, fork(5, "x4"), synccore.CodeConflict) // message 4 streams
	if err := fork(4, "ok4"); err != nil {            // before the streaming one: fine
		t.Fatalf("fork before the streaming message: %v", err)
	}
	WantCode(t, fork(2, "ok4"), synccore.CodeConflict) // the id is taken
	_, err := s.ForkSession(ctx, "nope", 2, store.Session{SessionID: "x5"})
	WantCode(t, err, synccore.CodeNotFound)
	for _, id := range []string{"x1", "x2", "x3", "x4", "x5"} {
		_, err := s.Session(ctx, id)
		WantCode(t, err, synccore.CodeNotFound)
	}
	// Once done, the whole session can be forked, and the fork starts empty
	// of its own.
	streaming.Revision, streaming.State = 2, synccore.MessageDone
	streaming.Parts = []synccore.Part{TextPart(1, "done", "...")}
	MustCommit(t, s, "r", streaming)
	if err := fork(5, "ok5"); err != nil {
		t.Fatalf("fork at the head: %v", err)
	}
	if got := ids(page(t, s, "ok5", store.PageQuery{}).Items); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("fork at the head reads %v", got)
	}
	// The fork's owner is its own field; listing shows forks with their root.
	list, err := s.ListSessions(ctx, 0)
	if err != nil || len(list) != 3 {
		t.Fatalf("ListSessions = %d sessions, %v; want 3", len(list), err)
	}
	for _, l := range list {
		if l.RootSessionID != "r" {
			t.Fatalf("listed %+v without its conversation root", l)
		}
	}
}

// testForkBranches: r = q1 a2 q3 a4; e edits 3 (fork before 3), g1 and g2
// regenerate 4 (forks before 4), h forks g1 after its 4.
func testForkBranches(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "r")
	MustCommit(t, s, "r", user("r", "q1", 1, "q"), doneAgent("r", "a2", 2, "a"), user("r", "q3", 3, "q"), doneAgent("r", "a4", 4, "a"))
	MustFork(t, s, "r", 3, "e")
	MustCommit(t, s, "e", user("e", "e3", 3, "edited"))
	MustFork(t, s, "r", 4, "g1")
	MustCommit(t, s, "g1", doneAgent("g1", "g1-4", 4, "again"))
	MustFork(t, s, "r", 4, "g2")
	MustCommit(t, s, "g2", doneAgent("g2", "g2-4", 4, "and again"))
	MustFork(t, s, "g1", 5, "h")
	MustCommit(t, s, "h", user("h", "h5", 5, "more"))

	type alt struct {
		session, message string
	}
	check := func(session string, n int64, want ...alt) {
		t.Helper()
		bs, err := s.Branches(ctx, session, n)
		if err != nil {
			t.Fatalf("Branches(%s, %d): %v", session, n, err)
		}
		var got []alt
		for i, b := range bs {
			if b.Index != i {
				t.Fatalf("Branches(%s, %d)[%d].Index = %d", session, n, i, b.Index)
			}
			a := alt{session: b.SessionID}
			if b.Message != nil {
				a.message = b.Message.MessageID
				if b.Message.Sequence != n || b.Message.SessionID != b.SessionID {
					t.Fatalf("Branches(%s, %d): message %+v", session, n, b.Message)
				}
			}
			got = append(got, a)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Branches(%s, %d) = %v, want %v", session, n, got, want)
		}
	}
	check("r", 1, alt{"r", "q1"})
	check("r", 2, alt{"r", "a2"})
	check("r", 3, alt{"r", "q3"}, alt{"e", "e3"})
	check("e", 3, alt{"r", "q3"}, alt{"e", "e3"})
	check("r", 4, alt{"r", "a4"}, alt{"g1", "g1-4"}, alt{"g2", "g2-4"})
	check("h", 4, alt{"r", "a4"}, alt{"h", "g1-4"}, alt{"g2", "g2-4"})
	check("h", 3, alt{"h", "q3"}, alt{"e", "e3"}) // h's path takes r's q3
	check("e", 4, alt{"e", ""})                   // nothing at 4 yet: its own only alternative
	WantCode(t, func() error { _, err := s.Branches(ctx, "e", 5); return err }(), synccore.CodeBadRequest)
	WantCode(t, func() error { _, err := s.Branches(ctx, "e", 0); return err }(), synccore.CodeBadRequest)

	counts, err := s.BranchCounts(ctx, "h", 1, 100)
	want := []store.BranchCount{{Sequence: 3, Count: 2, Index: 0}, {Sequence: 4, Count: 3, Index: 1}}
	if err != nil || !reflect.DeepEqual(counts, want) {
		t.Fatalf("BranchCounts(h) = %+v, %v; want %+v", counts, err, want)
	}
	if counts, err = s.BranchCounts(ctx, "h", 4, 4); err != nil || len(counts) != 1 || counts[0].Sequence != 4 {
		t.Fatalf("BranchCounts(h, 4, 4) = %+v, %v", counts, err)
	}
	if counts, err = s.BranchCounts(ctx, "e", 1, 100); err != nil || !reflect.DeepEqual(counts, []store.BranchCount{{Sequence: 3, Count: 2, Index: 1}}) {
		t.Fatalf("BranchCounts(e) = %+v, %v", counts, err)
	}
	// Deleting g1 keeps h's prefix (g1's message 4): the alternative is
	// now shown by h, for every session of the group.
	if err := s.DeleteSession(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	check("r", 4, alt{"r", "a4"}, alt{"h", "g1-4"}, alt{"g2", "g2-4"})
	if got := ids(page(t, s, "h", store.PageQuery{}).Items); !slices.Equal(got, []string{"q1", "a2", "q3", "g1-4", "h5"}) {
		t.Fatalf("h after its parent's delete reads %v", got)
	}
	if err := s.DeleteSession(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	check("r", 4, alt{"r", "a4"}, alt{"g2", "g2-4"})
}

func testForkDelete(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "r")
	MustCommit(t, s, "r", user("r", "q1", 1, "q"), doneAgent("r", "a2", 2, "a"), user("r", "q3", 3, "q"))
	MustFork(t, s, "r", 3, "f")
	MustFork(t, s, "f", 3, "g") // a fork of an empty fork
	MustCommit(t, s, "g", user("g", "g3", 3, "g"))
	if err := s.DeleteSession(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Session(ctx, "r")
	WantCode(t, err, synccore.CodeNotFound)
	_, err = s.Messages(ctx, "r", store.PageQuery{})
	WantCode(t, err, synccore.CodeNotFound)
	WantCode(t, s.Commit(ctx, "r", []synccore.Message{user("r", "q4", 4, "late")}), synccore.CodeNotFound)
	WantCode(t, s.DeleteSession(ctx, "r"), synccore.CodeNotFound)
	_, err = s.ForkSession(ctx, "r", 2, store.Session{SessionID: "x"})
	WantCode(t, err, synccore.CodeNotFound)
	// The id of a tombstone stays taken.
	WantCode(t, s.CreateSession(ctx, store.Session{SessionID: "r", Model: "m"}), synccore.CodeConflict)
	_, err = s.ForkSession(ctx, "f", 2, store.Session{SessionID: "r", Model: "m"})
	WantCode(t, err, synccore.CodeConflict)
	if list, _ := s.ListSessions(ctx, 0); len(list) != 2 {
		t.Fatalf("ListSessions after deleting the root lists %d sessions, want 2", len(list))
	}
	if got := ids(page(t, s, "f", store.PageQuery{}).Items); !slices.Equal(got, []string{"q1", "a2"}) {
		t.Fatalf("f reads %v", got)
	}
	if f, _ := s.Session(ctx, "f"); f.ParentSessionID != "r" || f.RootSessionID != "r" {
		t.Fatalf("f = %+v: still names its deleted parent and root", f)
	}
	if err := s.DeleteSession(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if got := ids(page(t, s, "g", store.PageQuery{}).Items); !slices.Equal(got, []string{"q1", "a2", "g3"}) {
		t.Fatalf("g reads %v", got)
	}
	if err := s.DeleteSession(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListSessions(ctx, 0); len(list) != 0 {
		t.Fatalf("ListSessions after deleting all lists %d sessions", len(list))
	}
	// A reopened store (a restarted server) reads the same.
	NewSession(t, s, "r2")
	MustCommit(t, s, "r2", user("r2", "x1", 1, "q"), doneAgent("r2", "x2", 2, "a"))
	MustFork(t, s, "r2", 2, "f2")
	if err := s.DeleteSession(ctx, "r2"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, "main")
	if got := ids(page(t, s, "f2", store.PageQuery{}).Items); !slices.Equal(got, []string{"x1"}) {
		t.Fatalf("f2 after a reopen reads %v", got)
	}
}

func testForkSummaries(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "r")
	MustCommit(t, s, "r", user("r", "q1", 1, "q"), doneAgent("r", "a2", 2, "a"), user("r", "q3", 3, "q"), doneAgent("r", "a4", 4, "a"))
	if err := s.PutSummary(ctx, "r", store.Summary{FromSequence: 1, ToSequence: 2, Text: "early", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSummary(ctx, "r", store.Summary{FromSequence: 1, ToSequence: 4, Text: "late", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	MustFork(t, s, "r", 4, "f")
	sum, ok, err := s.LatestSummary(ctx, "f")
	if err != nil || !ok || sum.Text != "early" {
		t.Fatalf("LatestSummary(f) = %+v %v %v, want the parent's summary that ends in the prefix", sum, ok, err)
	}
	MustFork(t, s, "r", 2, "g")
	if _, ok, err := s.LatestSummary(ctx, "g"); err != nil || ok {
		t.Fatalf("LatestSummary(g) = %v %v, want none (every parent summary ends past the fork)", ok, err)
	}
	MustCommit(t, s, "f", doneAgent("f", "f4", 4, "b"))
	if err := s.PutSummary(ctx, "f", store.Summary{FromSequence: 1, ToSequence: 4, Text: "fork's", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if sum, _, _ := s.LatestSummary(ctx, "f"); sum.Text != "fork's" {
		t.Fatalf("LatestSummary(f) = %q, want the fork's own", sum.Text)
	}
	if sum, _, _ := s.LatestSummary(ctx, "r"); sum.Text != "late" {
		t.Fatalf("LatestSummary(r) = %q, want the root's own", sum.Text)
	}
}
