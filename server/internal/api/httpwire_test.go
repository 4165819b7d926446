package api

import (
	"slices"
	"testing"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/session"
)

// The names httpwire declares for hosts are the ones the session package
// accepts: every action type, and the approval modes.
func TestHTTPWireNamesMatchTheServer(t *testing.T) {
	want := []string{string(httpwire.ActionStop), string(httpwire.ActionSetModel),
		string(httpwire.ActionSetApprovalMode), string(httpwire.ActionRetry)}
	got := session.ActionTypes()
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("session accepts actions %v, httpwire declares %v", got, want)
	}
	if string(httpwire.ApprovalAsk) != session.ApprovalAsk || string(httpwire.ApprovalAuto) != session.ApprovalAuto {
		t.Errorf("approval modes: httpwire %q/%q, session %q/%q", httpwire.ApprovalAsk, httpwire.ApprovalAuto, session.ApprovalAsk, session.ApprovalAuto)
	}
	if string(httpwire.KindApproval) != session.KindApproval || string(httpwire.KindQuestion) != session.KindQuestion {
		t.Errorf("interaction kinds: httpwire %q/%q, session %q/%q", httpwire.KindApproval, httpwire.KindQuestion, session.KindApproval, session.KindQuestion)
	}
}
