package api

import (
	"context"
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
// its subscribers were sent their closing error frame. Its file references
// go with it, and each blob no other session references (a fork's do).
func (a *api) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := a.mgr.Delete(r.Context(), id); err != nil {
		a.writeError(w, r, err)
		return
	}
	if a.files != nil {
		// The session is gone whatever happens here: a failure leaves
		// blobs nobody can read (logged), not a session half deleted.
		if err := a.files.blobs.Release(context.WithoutCancel(r.Context()), id); err != nil {
			a.log.Error("release the files of a deleted session", "session", id, "err", err)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
