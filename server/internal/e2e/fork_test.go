package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
)

// forkPage is a page with the alternatives beside its items.
type forkPage struct {
	synccore.MessagePage
	Branches []httpwire.BranchCount `json:"branches" msgpack:"branches"`
}

func messageIDs(msgs []synccore.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

func (s *testServer) fork(sid string, body map[string]any) httpwire.Session {
	s.t.Helper()
	var out httpwire.Session
	s.do("POST", "/v1/sessions/"+sid+"/fork", body).expect(s.t, http.StatusCreated, &out)
	return out
}

func (s *testServer) branches(sid, seq string) httpwire.BranchList {
	s.t.Helper()
	var out httpwire.BranchList
	s.do("GET", "/v1/sessions/"+sid+"/branches?sequence="+seq, nil, "Accept: application/msgpack").expect(s.t, http.StatusOK, &out)
	return out
}

// TestForkEditRegenerate: an edit and a regeneration are forks that keep
// the original; each path reads as one ordered list sharing the prefix's
// messages; the alternatives are listed per position and beside a page's
// items; a deleted parent keeps what its forks share.
func TestForkEditRegenerate(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOpts{})
	root := s.createSession()
	s.say(root, "hello")
	s.waitIdle(root, 2)
	s.say(root, "second question")
	orig := s.waitIdle(root, 4)

	// Edit message 3.
	edit := s.fork(root, map[string]any{"before_sequence": 3, "parts": []map[string]any{{"type": "text", "text": "edited question"}}})
	if edit.ParentSessionID != root || edit.ForkSequence != 3 || edit.RootSessionID != root || edit.SessionID == root {
		t.Fatalf("edit fork = %+v", edit)
	}
	edited := s.waitIdle(edit.SessionID, 4)
	if !slices.Equal(messageIDs(edited[:2]), messageIDs(orig[:2])) {
		t.Fatalf("the edit's prefix %v is not the parent's %v", messageIDs(edited[:2]), messageIDs(orig[:2]))
	}
	for i, m := range edited {
		if m.Sequence != int64(i+1) || m.SessionID != edit.SessionID {
			t.Fatalf("edit path message %d = #%d of %q", i, m.Sequence, m.SessionID)
		}
	}
	if edited[2].Role != synccore.RoleUser || edited[2].Parts[0].Text != "edited question" || edited[3].Role != synccore.RoleAgent {
		t.Fatalf("edit's own messages: %s", summary(edited[2:]))
	}

	// Regenerate message 4 (the reply): twice.
	regen := s.fork(root, map[string]any{"before_sequence": 4, "regenerate": true})
	// The take's number counts the versions written so far: the second
	// regeneration waits for the first one's reply.
	s.waitIdle(regen.SessionID, 4)
	regen2 := s.fork(root, map[string]any{"before_sequence": 4, "regenerate": true})
	replyText := func(m synccore.Message) string {
		for _, p := range m.Parts {
			if p.Type == synccore.PartText {
				return p.Text
			}
		}
		return ""
	}
	for i, r := range []httpwire.Session{regen, regen2} {
		got := s.waitIdle(r.SessionID, 4)
		// The scripted model replays the turn with a visible difference.
		if want := fmt.Sprintf("(Take %d) ", i+2); !strings.HasPrefix(replyText(got[3]), want) || replyText(got[3]) == replyText(orig[3]) {
			t.Fatalf("regeneration %d answered %.60q; the original %.60q", i+1, replyText(got[3]), replyText(orig[3]))
		}
		if !slices.Equal(messageIDs(got[:3]), messageIDs(orig[:3])) || got[3].MessageID == orig[3].MessageID {
			t.Fatalf("regenerated path %v vs original %v", messageIDs(got), messageIDs(orig))
		}
		if got[3].Role != synccore.RoleAgent || got[3].TurnID != orig[2].TurnID || len(got) != 4 {
			t.Fatalf("regenerated reply: %s (want one agent message of turn %s)", summary(got[3:]), orig[2].TurnID)
		}
	}
	// The parent never changed.
	if now := s.all(root, true); !slices.Equal(messageIDs(now), messageIDs(orig)) {
		t.Fatalf("the root changed: %v, was %v", messageIDs(now), messageIDs(orig))
	}

	// Alternatives per position.
	b := s.branches(root, "4")
	if len(b.Items) != 3 || b.Index != 0 || b.Items[0].SessionID != root || b.Items[1].SessionID != regen.SessionID ||
		b.Items[2].SessionID != regen2.SessionID || b.Items[1].Message == nil || b.Items[1].Message.SessionID != regen.SessionID {
		t.Fatalf("branches at 4 of the root = %+v", b)
	}
	if b = s.branches(regen2.SessionID, "4"); b.Index != 2 || len(b.Items) != 3 {
		t.Fatalf("branches at 4 of the second regeneration = %+v", b)
	}
	if b = s.branches(edit.SessionID, "3"); b.Index != 1 || len(b.Items) != 2 || b.Items[1].Message.Parts[0].Text != "edited question" {
		t.Fatalf("branches at 3 of the edit = %+v", b)
	}
	if b = s.branches(root, "1"); len(b.Items) != 1 {
		t.Fatalf("branches at 1 = %+v", b)
	}
	// Beside a page's items, in JSON and msgpack.
	for _, accept := range []string{"Accept: application/json", "Accept: application/msgpack"} {
		var p forkPage
		s.do("GET", "/v1/sessions/"+regen.SessionID+"/messages", nil, accept).expect(t, http.StatusOK, &p)
		want := []httpwire.BranchCount{{Sequence: 3, Count: 2, Index: 0}, {Sequence: 4, Count: 3, Index: 1}}
		if !slices.Equal(p.Branches, want) || len(p.Items) != 4 || p.Total != 4 {
			t.Fatalf("%s: page branches %+v (items %d), want %+v", accept, p.Branches, len(p.Items), want)
		}
	}
	var alts httpwire.AlternativeList
	s.do("GET", "/v1/sessions/"+regen2.SessionID+"/alternatives", nil).expect(t, http.StatusOK, &alts)
	if want := []httpwire.BranchCount{{Sequence: 3, Count: 2, Index: 0}, {Sequence: 4, Count: 3, Index: 2}}; !slices.Equal(alts.Items, want) {
		t.Fatalf("alternatives of the second regeneration = %+v, want %+v", alts.Items, want)
	}
	s.do("GET", "/v1/sessions/"+regen2.SessionID+"/alternatives?from=4&to=4", nil).expect(t, http.StatusOK, &alts)
	if len(alts.Items) != 1 || alts.Items[0].Sequence != 4 {
		t.Fatalf("alternatives 4..4 = %+v", alts.Items)
	}
	s.do("GET", "/v1/sessions/"+root+"/alternatives?from=x", nil).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
	var plain map[string]any
	s.do("GET", "/v1/sessions/"+root+"/messages?limit=2", nil).expect(t, http.StatusOK, &plain)
	if _, ok := plain["branches"]; !ok {
		t.Fatalf("a page of positions 3..4 has no branches: %v", plain)
	}
	plain = nil
	s.do("GET", "/v1/sessions/"+root+"/messages?before_sequence=3", nil).expect(t, http.StatusOK, &plain)
	if _, ok := plain["branches"]; ok {
		t.Fatalf("a page of positions 1..2 lists branches: %v", plain["branches"])
	}

	// Bad requests.
	for _, body := range []map[string]any{
		{"before_sequence": 1}, {"before_sequence": 6}, {"before_sequence": 0}, {},
		{"before_sequence": 3, "regenerate": true, "parts": []map[string]any{{"type": "text", "text": "x"}}},
		{"before_sequence": 3, "parts": []map[string]any{{"type": "tool"}}},
	} {
		if r := s.do("POST", "/v1/sessions/"+root+"/fork", body); r.Status != http.StatusBadRequest {
			t.Fatalf("fork %v: status %d, want 400; body %s", body, r.Status, truncate(r.Body))
		}
	}
	s.do("POST", "/v1/sessions/ses_nope/fork", map[string]any{"before_sequence": 2}).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
	s.do("GET", "/v1/sessions/"+root+"/branches?sequence=x", nil).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
	s.do("GET", "/v1/sessions/"+root+"/branches?sequence=9", nil).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)

	// The session list shows every session with its conversation.
	var list httpwire.SessionList
	s.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if len(list.Items) != 4 {
		t.Fatalf("list has %d sessions, want 4", len(list.Items))
	}
	for _, l := range list.Items {
		if l.RootSessionID != root {
			t.Fatalf("listed %s with root %q, want %q", l.SessionID, l.RootSessionID, root)
		}
	}

	// Deleting the root keeps its forks' prefix.
	s.do("DELETE", "/v1/sessions/"+root, nil).expect(t, http.StatusNoContent, nil)
	s.do("GET", "/v1/sessions/"+root+"/messages", nil).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
	if got := s.all(edit.SessionID, true); !slices.Equal(messageIDs(got), messageIDs(edited)) {
		t.Fatalf("the edit after its parent's delete reads %v, want %v", messageIDs(got), messageIDs(edited))
	}
	// The root's alternative at 4 is gone with it (nothing live shows it).
	if b = s.branches(regen.SessionID, "4"); len(b.Items) != 2 || b.Index != 0 {
		t.Fatalf("branches at 4 after the root's delete = %+v", b)
	}
	// A fork keeps working: a new message continues its numbering.
	s.say(edit.SessionID, "more")
	if got := s.waitIdle(edit.SessionID, 6); got[4].Sequence != 5 || got[5].Sequence != 6 {
		t.Fatalf("edit after more: %s", summary(got))
	}
}
