package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// searchSuite are the search and window tests (store.Searcher,
// store.Windower), run by Run.
var searchSuite = []struct {
	name string
	fn   func(*testing.T, Opener)
}{
	{"SearchIndexesDoneVisibleText", testSearchIndexesDoneVisibleText},
	{"SearchOwnersAndPages", testSearchOwnersAndPages},
	{"SearchMembersFindSharedSessions", testSearchMembers},
	{"SearchDeletionsAndForks", testSearchDeletionsAndForks},
	{"SearchSeesAnotherNodesWrites", testSearchSeesAnotherNode},
	{"WindowAroundEdges", testWindowAroundEdges},
	{"WindowAroundAlongAFork", testWindowAroundFork},
}

func newOwned(t testing.TB, s store.Store, id, owner string) {
	t.Helper()
	if err := s.CreateSession(context.Background(), store.Session{SessionID: id, Model: "scripted", ApprovalMode: "ask", Owner: owner}); err != nil {
		t.Fatalf("CreateSession(%q): %v", id, err)
	}
}

// MustSearch searches and fails the test on error.
func MustSearch(t testing.TB, s store.Store, q store.SearchQuery) store.SearchPage {
	t.Helper()
	p, err := s.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return p
}

// hitKeys renders hits as session/sequence, for comparisons.
func hitKeys(p store.SearchPage) []string {
	out := make([]string, len(p.Items))
	for i, h := range p.Items {
		out[i] = fmt.Sprintf("%s/%d", h.SessionID, h.Sequence)
	}
	return out
}

func wantHits(t testing.TB, s store.Store, owner, q string, want ...string) store.SearchPage {
	t.Helper()
	p := MustSearch(t, s, store.SearchQuery{Owner: owner, Text: q})
	if got := hitKeys(p); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("Search(%q) = %v, want %v", q, got, want)
	}
	return p
}

func testSearchIndexesDoneVisibleText(t *testing.T, open Opener) {
	s := open(t, "main")
	newOwned(t, s, "s", "ann")
	MustCommit(t, s, "s", UserMessage("s", 1, "Where is the <b>zebra</b> & its stripes?"))
	// An agent message streams: not searchable until done.
	a := AgentMessage("s", 2, TextPart(1, "streaming", "the zebra lives"))
	MustCommit(t, s, "s", a)
	wantHits(t, s, "ann", "zebra", "s/1")
	wantHits(t, s, "ann", "lives")
	// Closed by a commit that gives only a new part: the stored part's
	// text is indexed too; reasoning is not.
	a.Revision, a.State = 2, synccore.MessageDone
	a.Parts = []synccore.Part{
		{PartID: "r:2", Sequence: 2, Type: synccore.PartReasoning, State: "done", Text: "ponder okapi"},
		TextPart(3, "done", "in the savanna"),
	}
	MustCommit(t, s, "s", a)
	wantHits(t, s, "ann", "zebra", "s/2", "s/1")
	wantHits(t, s, "ann", "lives savanna", "s/2")
	wantHits(t, s, "ann", "okapi")
	// Internal messages are never found.
	in := UserMessage("s", 3, "internal giraffe")
	in.Visibility = synccore.VisibilityInternal
	MustCommit(t, s, "s", in)
	wantHits(t, s, "ann", "giraffe")
	// Case-insensitive words, the last one a prefix; every word required.
	wantHits(t, s, "ann", "ZEBRA strip", "s/1")
	wantHits(t, s, "ann", "zebra stripes savanna")
	wantHits(t, s, "ann", `"zebra" OR* NEAR(`) // operators are plain words: no "or" in the text
	// The snippet is HTML: text escaped, matches in <mark>.
	p := wantHits(t, s, "ann", "zebra stripes", "s/1")
	h := p.Items[0]
	if h.MessageID != "msg-1" || h.Role != synccore.RoleUser || h.CreatedAt == 0 {
		t.Fatalf("hit = %+v", h)
	}
	for _, want := range []string{"&lt;b&gt;<mark>zebra</mark>&lt;/b&gt;", "&amp;", "<mark>stripes</mark>"} {
		if !strings.Contains(h.Snippet, want) {
			t.Fatalf("snippet %q lacks %q", h.Snippet, want)
		}
	}
	// Queries without a word are refused.
	for _, q := range []string{"", "  ", "?!", strings.Repeat("a ", store.MaxSearchTerms+1), strings.Repeat("a", store.MaxSearchBytes+1)} {
		_, err := s.Search(context.Background(), store.SearchQuery{Owner: "ann", Text: q})
		WantCode(t, err, synccore.CodeBadRequest)
	}
}

func testSearchOwnersAndPages(t *testing.T, open Opener) {
	s := open(t, "main")
	newOwned(t, s, "a1", "ann")
	newOwned(t, s, "a2", "ann")
	newOwned(t, s, "b1", "bob")
	newOwned(t, s, "shared", "")
	var want []string
	for i := int64(1); i <= 7; i++ {
		MustCommit(t, s, "a1", UserMessage("a1", i, fmt.Sprintf("apple number %d", i)))
		want = append(want, fmt.Sprintf("a1/%d", i))
		if i <= 3 {
			MustCommit(t, s, "a2", UserMessage("a2", i, "apple pie"))
			want = append(want, fmt.Sprintf("a2/%d", i))
		}
	}
	MustCommit(t, s, "b1", UserMessage("b1", 1, "apple of bob"))
	MustCommit(t, s, "shared", UserMessage("shared", 1, "apple for all"))
	slices.Reverse(want) // newest first
	// Pages of 3 walk every hit of ann's once, newest first.
	var got []string
	cursor := int64(0)
	for range 10 {
		p := MustSearch(t, s, store.SearchQuery{Owner: "ann", Text: "apple", Limit: 3, Cursor: cursor})
		got = append(got, hitKeys(p)...)
		if p.NextCursor == 0 {
			break
		}
		if len(p.Items) != 3 {
			t.Fatalf("a page with a next cursor has %d items", len(p.Items))
		}
		cursor = p.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages = %v, want %v", got, want)
	}
	wantHits(t, s, "bob", "apple", "b1/1")
	wantHits(t, s, "", "apple", "shared/1")
	wantHits(t, s, "carol", "apple")
	if p := MustSearch(t, s, store.SearchQuery{Owner: "ann", Text: "apple", Limit: 10}); p.NextCursor != 0 || len(p.Items) != 10 {
		t.Fatalf("an exact last page: %d items, next %d", len(p.Items), p.NextCursor)
	}
}

// A member of a session (any role) finds its messages as its owner does;
// once removed, no longer; a share link is no principal's.
func testSearchMembers(t *testing.T, open Opener) {
	s := open(t, "main")
	ctx := context.Background()
	newOwned(t, s, "ann1", "ann")
	newOwned(t, s, "ann2", "ann")
	MustCommit(t, s, "ann1", UserMessage("ann1", 1, "quince jam"))
	MustCommit(t, s, "ann2", UserMessage("ann2", 1, "quince tart"))
	for _, m := range []store.Member{{SessionID: "ann1", Principal: "bob", Role: store.RoleViewer}, {SessionID: "ann1", Principal: "carol", Role: store.RoleEditor}} {
		if err := s.PutMember(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	wantHits(t, s, "ann", "quince", "ann2/1", "ann1/1")
	wantHits(t, s, "bob", "quince", "ann1/1")
	wantHits(t, s, "carol", "quince jam", "ann1/1")
	wantHits(t, s, "dave", "quince")
	if err := s.DeleteMember(ctx, "ann1", "bob"); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, "bob", "quince")
	wantHits(t, s, "carol", "quince", "ann1/1")
}

func testSearchDeletionsAndForks(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	newOwned(t, s, "root", "ann")
	MustCommit(t, s, "root", user("root", "u1", 1, "kiwi question"), doneAgent("root", "a2", 2, "kiwi answer"),
		user("root", "u3", 3, "mango later"))
	if _, err := s.ForkSession(ctx, "root", 3, store.Session{SessionID: "fork", Model: "scripted", ApprovalMode: "ask", Owner: "ann"}); err != nil {
		t.Fatal(err)
	}
	MustCommit(t, s, "fork", user("fork", "f3", 3, "kiwi edited"))
	// The shared prefix is found once, under the session it was written in.
	p := wantHits(t, s, "ann", "kiwi", "fork/3", "root/2", "root/1")
	// A hit opens: the session's window around its sequence holds it.
	for _, h := range p.Items {
		w, err := s.Window(ctx, h.SessionID, store.PageQuery{AroundSequence: h.Sequence, Limit: 1})
		if err != nil || len(w.Items) != 1 || w.Items[0].MessageID != h.MessageID {
			t.Fatalf("window around hit %+v: %+v, %v", h, w, err)
		}
	}
	// The root deleted (a tombstone: the fork still shows its prefix):
	// its messages drop out, the fork's own stay.
	if err := s.DeleteSession(ctx, "root"); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, "ann", "kiwi", "fork/3")
	wantHits(t, s, "ann", "mango")
	if err := s.DeleteSession(ctx, "fork"); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, "ann", "kiwi")
	// A session deleted outright drops out too.
	newOwned(t, s, "solo", "ann")
	MustCommit(t, s, "solo", UserMessage("solo", 1, "kiwi again"))
	wantHits(t, s, "ann", "kiwi", "solo/1")
	if err := s.DeleteSession(ctx, "solo"); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, "ann", "kiwi")
}

func testSearchSeesAnotherNode(t *testing.T, open Opener) {
	a := open(t, "main")
	newOwned(t, a, "s", "ann")
	MustCommit(t, a, "s", UserMessage("s", 1, "written on node a: papaya"))
	b := open(t, "main") // a second node on the same data
	wantHits(t, b, "ann", "papaya", "s/1")
	MustCommit(t, b, "s", doneAgent("s", "a2", 2, "papaya from b"))
	wantHits(t, a, "ann", "papaya", "s/2", "s/1")
}

// windowModel checks a window page against the visible sequences vis of
// the path (all of them when internal ones are included).
func checkWindow(t *testing.T, s store.Store, sessionID string, vis []int64, q store.PageQuery) {
	t.Helper()
	w, err := s.Window(context.Background(), sessionID, q)
	if err != nil {
		t.Fatalf("Window(%+v): %v", q, err)
	}
	got := sequences(w.Items)
	limit := store.PageLimit(q.Limit)
	head := int64(0)
	if len(vis) > 0 {
		head = slices.Max(vis)
	}
	at := min(q.AroundSequence, max(head, 1))
	idx, _ := slices.BinarySearch(vis, at) // first visible >= at
	nOlder := min(limit/2, idx)
	nNewer := min(limit-nOlder, len(vis)-idx)
	nOlder = min(limit-nNewer, idx)
	want := vis[idx-nOlder : idx+nNewer]
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("Window(%+v) = %v, want %v (visible %v)", q, got, want, vis)
	}
	if w.HasMore != (idx-nOlder > 0) || w.HasNewer != (idx+nNewer < len(vis)) {
		t.Fatalf("Window(%+v): has_more %v has_newer %v, page %v of %v", q, w.HasMore, w.HasNewer, got, vis)
	}
	for _, m := range w.Items {
		if m.SessionID != sessionID || len(m.Parts) == 0 {
			t.Fatalf("Window(%+v): item %+v", q, m)
		}
	}
	// The cursors read on exactly: older pages by before_sequence, newer
	// ones by after_sequence.
	if w.HasMore {
		older := page(t, s, sessionID, store.PageQuery{Limit: limit, BeforeSequence: w.NextBeforeSequence, IncludeInternal: q.IncludeInternal})
		lo := max(idx-nOlder-limit, 0)
		if o := sequences(older.Items); !slices.Equal(o, vis[lo:idx-nOlder]) {
			t.Fatalf("older page of %+v = %v, want %v", q, o, vis[lo:idx-nOlder])
		}
	}
	if w.HasNewer {
		newer, err := s.Window(context.Background(), sessionID, store.PageQuery{Limit: limit, AfterSequence: w.NextAfterSequence, IncludeInternal: q.IncludeInternal})
		if err != nil {
			t.Fatal(err)
		}
		hi := min(idx+nNewer+limit, len(vis))
		if n := sequences(newer.Items); !slices.Equal(n, vis[idx+nNewer:hi]) {
			t.Fatalf("newer page of %+v = %v, want %v", q, n, vis[idx+nNewer:hi])
		}
		if !newer.HasMore || newer.HasNewer != (hi < len(vis)) {
			t.Fatalf("newer page of %+v: has_more %v has_newer %v", q, newer.HasMore, newer.HasNewer)
		}
	}
}

func testWindowAroundEdges(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "empty")
	if w, err := s.Window(ctx, "empty", store.PageQuery{AroundSequence: 5, Limit: 3}); err != nil || len(w.Items) != 0 || w.HasMore || w.HasNewer {
		t.Fatalf("empty window = %+v, %v", w, err)
	}
	NewSession(t, s, "s")
	var all, vis []int64
	for i := int64(1); i <= 9; i++ {
		m := UserMessage("s", i, fmt.Sprintf("m%d", i))
		if i == 4 || i == 5 {
			m.Visibility = synccore.VisibilityInternal
		} else {
			vis = append(vis, i)
		}
		all = append(all, i)
		MustCommit(t, s, "s", m)
	}
	for limit := 1; limit <= 10; limit++ {
		for at := int64(1); at <= 11; at++ {
			checkWindow(t, s, "s", vis, store.PageQuery{AroundSequence: at, Limit: limit})
			checkWindow(t, s, "s", all, store.PageQuery{AroundSequence: at, Limit: limit, IncludeInternal: true})
		}
	}
	for _, q := range []store.PageQuery{
		{AroundSequence: 2, BeforeSequence: 3},
		{AroundSequence: 2, AfterSequence: 1},
		{AroundSequence: -1},
	} {
		_, err := s.Window(ctx, "s", q)
		WantCode(t, err, synccore.CodeBadRequest)
	}
	_, err := s.Window(ctx, "nope", store.PageQuery{AroundSequence: 1})
	WantCode(t, err, synccore.CodeNotFound)
	// An after page past the head is empty, with the older side.
	w, err := s.Window(ctx, "s", store.PageQuery{AfterSequence: 9, Limit: 2})
	if err != nil || len(w.Items) != 0 || w.HasNewer || !w.HasMore || w.NextBeforeSequence != 10 {
		t.Fatalf("after the head: %+v, %v", w, err)
	}
}

func testWindowAroundFork(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "root")
	for i := int64(1); i <= 6; i++ {
		MustCommit(t, s, "root", UserMessage("root", i, fmt.Sprintf("r%d", i)))
	}
	MustFork(t, s, "root", 4, "f1")
	MustCommit(t, s, "f1", UserMessage("f1", 4, "f4"), UserMessage("f1", 5, "f5"))
	MustFork(t, s, "f1", 5, "f2")
	for i := int64(5); i <= 8; i++ {
		MustCommit(t, s, "f2", UserMessage("f2", i, fmt.Sprintf("g%d", i)))
	}
	path := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	for limit := 1; limit <= 9; limit++ {
		for at := int64(1); at <= 8; at++ {
			checkWindow(t, s, "f2", path, store.PageQuery{AroundSequence: at, Limit: limit})
		}
	}
	w, err := s.Window(context.Background(), "f2", store.PageQuery{AroundSequence: 4, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(w.Items); !slices.Equal(got, []string{"msg-3", "msg-4", "msg-5"}) || w.Items[1].Parts[0].Text != "f4" || w.Items[2].Parts[0].Text != "g5" {
		t.Fatalf("fork window = %v %+v", got, w.Items)
	}
}
