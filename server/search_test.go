package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/synccore"
)

type windowBody struct {
	synccore.MessagePage
	HasNewer          bool  `json:"has_newer"`
	NextAfterSequence int64 `json:"next_after_sequence"`
}

// settled posts text into sid as user and waits (10 s at most) until the
// turn's reply is done, then returns the session's whole visible page.
func (l *live) settled(user, sid, text string) synccore.MessagePage {
	l.t.Helper()
	body, _ := json.Marshal(map[string]any{"parts": []map[string]string{{"type": "text", "text": text}}})
	if a := l.call(nil, user, "POST", "/v1/sessions/"+sid+"/messages", string(body)); a.status != http.StatusCreated {
		l.t.Fatalf("post: %d %s", a.status, a.body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var p synccore.MessagePage
		a := l.call(nil, user, "GET", "/v1/sessions/"+sid+"/messages?limit=200", "")
		if err := json.Unmarshal(a.body, &p); err != nil || a.status != http.StatusOK {
			l.t.Fatalf("page: %d %s", a.status, a.body)
		}
		if n := len(p.Items); n > 0 && p.Items[n-1].Role == synccore.RoleAgent && p.Items[n-1].State == synccore.MessageDone {
			return p
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("the reply to %q is not done after 10 s: %+v", text, p.Items)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *live) search(user, q string, extra string) (httpwire.SearchResults, answer) {
	l.t.Helper()
	a := l.call(nil, user, "GET", "/v1/search?q="+url.QueryEscape(q)+extra, "")
	var out httpwire.SearchResults
	if a.status == http.StatusOK {
		if err := json.Unmarshal(a.body, &out); err != nil {
			l.t.Fatalf("search body %s: %v", a.body, err)
		}
	}
	return out, a
}

// TestSearchOverHTTP: GET /v1/search finds the principal's own messages
// only, marks the match in an HTML-safe snippet, pages with its cursor and
// refuses bad parameters with 400 bad_request; a hit opens with
// around_sequence.
func TestSearchOverHTTP(t *testing.T) {
	t.Parallel()
	s := start(t, "", server.Config{Authorizer: byHeader})
	ann, bob := s.createSession("ann"), s.createSession("bob")
	page := s.settled("ann", ann, "where do <quokkas> live?")
	for i := range 3 {
		s.settled("ann", ann, fmt.Sprintf("filler %d", i))
	}
	s.settled("bob", bob, "bob likes quokkas too")

	res, a := s.search("ann", "QUOKKA", "")
	// The user's message and the scripted reply that quotes it, newest
	// first.
	if a.status != http.StatusOK || len(res.Items) != 2 || res.NextCursor != "" || res.Items[0].MessageID != page.Items[1].MessageID {
		t.Fatalf("ann's search: %d %s", a.status, a.body)
	}
	h := res.Items[1]
	if h.SessionID != ann || h.Sequence != page.Items[0].Sequence || h.MessageID != page.Items[0].MessageID || h.Role != "user" {
		t.Fatalf("hit %+v, want the first message of %s", h, ann)
	}
	if want := "where do &lt;<mark>quokkas</mark>&gt; live?"; h.Snippet != want {
		t.Fatalf("snippet %q, want %q", h.Snippet, want)
	}
	if res, _ := s.search("bob", "quokka", ""); len(res.Items) != 2 || res.Items[0].SessionID != bob || res.Items[1].SessionID != bob {
		t.Fatalf("bob's search: %+v", res)
	}
	if res, _ := s.search("carol", "quokka", ""); len(res.Items) != 0 {
		t.Fatalf("carol's search: %+v", res)
	}
	if _, a := s.search("", "quokka", ""); a.status != http.StatusUnauthorized {
		t.Fatalf("no principal: %d", a.status)
	}
	// The agent's replies are found once done.
	reply := page.Items[1]
	word := strings.Fields(reply.Parts[0].Text)[0]
	if res, _ := s.search("ann", word, "&limit=100"); !slices.ContainsFunc(res.Items, func(h httpwire.SearchHit) bool { return h.MessageID == reply.MessageID }) {
		t.Fatalf("the reply (%q) is not found by %q: %+v", reply.Parts[0].Text, word, res)
	}
	// Pages of one walk the three "filler" messages and their replies.
	var got []int64
	cursor := ""
	for range 10 {
		res, a := s.search("ann", "filler", "&limit=1&cursor="+cursor)
		if a.status != http.StatusOK {
			t.Fatalf("page: %d %s", a.status, a.body)
		}
		for _, h := range res.Items {
			got = append(got, h.Sequence)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if len(got) != 6 || !slices.IsSortedFunc(got, func(a, b int64) int { return int(b - a) }) {
		t.Fatalf("pages of one: %v", got)
	}
	for _, bad := range []string{"?q=", "?q=%21%3F", "?q=x&limit=0", "?q=x&limit=-1", "?q=x&limit=ten", "?q=x&cursor=%21", "?q=x&cursor=-5", "?q=x&cursor=0", "?limit=1"} {
		a := s.call(nil, "ann", "GET", "/v1/search"+bad, "")
		if a.status != http.StatusBadRequest || a.err.Code != synccore.CodeBadRequest {
			t.Fatalf("GET /v1/search%s: %d %s, want 400 bad_request", bad, a.status, a.body)
		}
	}

	// The hit opens: a page around its sequence holds it, exactly.
	full := s.settled("ann", ann, "last one")
	n := len(full.Items)
	seqs := make([]int64, n)
	for i, m := range full.Items {
		seqs[i] = m.Sequence
	}
	for _, limit := range []int{1, 2, 3, 4, 200} {
		for i := range n {
			a := s.call(nil, "ann", "GET", fmt.Sprintf("/v1/sessions/%s/messages?around_sequence=%d&limit=%d", ann, seqs[i], limit), "")
			var w windowBody
			if a.status != http.StatusOK || json.Unmarshal(a.body, &w) != nil {
				t.Fatalf("around: %d %s", a.status, a.body)
			}
			older := min(limit/2, i)
			newer := min(limit-older, n-i)
			older = min(limit-newer, i)
			want := seqs[i-older : i+newer]
			gotSeqs := make([]int64, len(w.Items))
			for j, m := range w.Items {
				gotSeqs[j] = m.Sequence
			}
			if !slices.Equal(gotSeqs, want) || w.HasMore != (i-older > 0) || w.HasNewer != (i+newer < n) {
				t.Fatalf("around %d limit %d: %v more %v newer %v, want %v", seqs[i], limit, gotSeqs, w.HasMore, w.HasNewer, want)
			}
			if w.HasNewer && w.NextAfterSequence != want[len(want)-1] || w.HasMore && w.NextBeforeSequence != want[0] {
				t.Fatalf("around %d limit %d: cursors %d/%d", seqs[i], limit, w.NextBeforeSequence, w.NextAfterSequence)
			}
		}
	}
	for _, bad := range []string{"around_sequence=0", "around_sequence=x", "after_sequence=-1", "around_sequence=2&before_sequence=3", "around_sequence=2&after_sequence=1"} {
		a := s.call(nil, "ann", "GET", "/v1/sessions/"+ann+"/messages?"+bad, "")
		if a.status != http.StatusBadRequest || a.err.Code != synccore.CodeBadRequest {
			t.Fatalf("?%s: %d %s, want 400 bad_request", bad, a.status, a.body)
		}
	}
	if a := s.call(nil, "bob", "GET", "/v1/sessions/"+ann+"/messages?around_sequence=1", ""); a.status != http.StatusNotFound {
		t.Fatalf("bob around ann's session: %d", a.status)
	}
	// Deleted, the session drops out of search.
	if a := s.call(nil, "ann", "DELETE", "/v1/sessions/"+ann, ""); a.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	if res, _ := s.search("ann", "quokka", ""); len(res.Items) != 0 {
		t.Fatalf("after delete: %+v", res)
	}
}
