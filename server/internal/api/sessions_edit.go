package api

import (
	"net/http"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
)

// renameSession: PATCH /v1/sessions/{id} {"title"}, answers the session.
func (a *api) renameSession(w http.ResponseWriter, r *http.Request) {
	var req httpwire.RenameSessionRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	if req.Title == nil {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "title is required"))
		return
	}
	s, err := a.mgr.Rename(r.Context(), r.PathValue("id"), *req.Title)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.writeValue(w, r, http.StatusOK, a.withCapabilities(toSessionBody(s)))
}

// deleteSession: DELETE /v1/sessions/{id}, 204 once the session is gone and
// its subscribers were sent their closing error frame.
func (a *api) deleteSession(w http.ResponseWriter, r *http.Request) {
	if err := a.mgr.Delete(r.Context(), r.PathValue("id")); err != nil {
		a.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
