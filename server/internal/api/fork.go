package api

import (
	"net/http"
	"strconv"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// forkSession: POST /v1/sessions/{id}/fork {"before_sequence", "parts"?,
// "regenerate"?}, answers 201 with the new session (docs/protocol.md,
// "Conversation tree"). The fork belongs to the parent's owner: only that
// principal reaches here (owned).
func (a *api) forkSession(w http.ResponseWriter, r *http.Request) {
	var req httpwire.ForkRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	s, err := a.mgr.Fork(r.Context(), r.PathValue("id"), session.Fork{
		BeforeSequence: req.BeforeSequence, Parts: req.Parts, Regenerate: req.Regenerate,
	})
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.writeValue(w, r, http.StatusCreated, a.withCapabilities(toSessionBody(s)))
}

// getBranches: GET /v1/sessions/{id}/branches?sequence=N, the
// alternatives at position N of the session's path.
func (a *api) getBranches(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query().Get("sequence")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "sequence must be a positive integer, got %q", v))
		return
	}
	bs, err := a.mgr.Branches(r.Context(), r.PathValue("id"), n)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	self := r.PathValue("id")
	out := httpwire.BranchList{Sequence: n, Items: make([]httpwire.Branch, 0, len(bs))}
	for _, b := range bs {
		if b.Message != nil {
			fillParts(b.Message)
		}
		if b.SessionID == self {
			out.Index = b.Index
		}
		out.Items = append(out.Items, httpwire.Branch{SessionID: b.SessionID, Index: b.Index, Message: b.Message})
	}
	a.writeValue(w, r, http.StatusOK, out)
}

// getAlternatives: GET /v1/sessions/{id}/alternatives?from=&to=, the
// positions from..to (default: the whole path) of the session's path
// that have more than one alternative.
func (a *api) getAlternatives(w http.ResponseWriter, r *http.Request) {
	bound := func(name string, def int64) (int64, error) {
		v := r.URL.Query().Get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return 0, synccore.Errorf(synccore.CodeBadRequest, "%s must be a positive integer, got %q", name, v)
		}
		return n, nil
	}
	from, err := bound("from", 1)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	to, err := bound("to", 1<<62)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	counts, err := a.mgr.BranchCounts(r.Context(), r.PathValue("id"), from, to)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out := httpwire.AlternativeList{Items: make([]httpwire.BranchCount, len(counts))}
	for i, c := range counts {
		out.Items[i] = httpwire.BranchCount(c)
	}
	a.writeValue(w, r, http.StatusOK, out)
}

// branchedPage is a page with the alternatives of its positions beside
// its items (never inside a message: a done message never changes).
type branchedPage struct {
	synccore.MessagePage
	Branches []httpwire.BranchCount `json:"branches,omitempty" msgpack:"branches,omitempty"`
}

// withBranches adds to page the positions of its items that have more
// than one alternative; the page itself when none has.
func (a *api) withBranches(r *http.Request, sessionID string, page synccore.MessagePage) (any, error) {
	if len(page.Items) == 0 {
		return page, nil
	}
	counts, err := a.mgr.BranchCounts(r.Context(), sessionID, page.StartSequence, page.EndSequence)
	if err != nil || len(counts) == 0 {
		return page, err
	}
	out := branchedPage{MessagePage: page, Branches: make([]httpwire.BranchCount, len(counts))}
	for i, c := range counts {
		out.Branches[i] = httpwire.BranchCount(c)
	}
	return out, nil
}
