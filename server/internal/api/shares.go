package api

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// CodeRevoked is the code of the error frame that ends a subscription
// whose access ended: its share link was revoked or expired, or its
// member was removed (docs/protocol.md §4.4). A new subscription with the
// same credential is refused (401 for a link, 404 for a former member).
const CodeRevoked = "revoked"

// Reasons of the CodeRevoked error frame.
const (
	ReasonShareRevoked  = "share revoked"
	ReasonShareExpired  = "share expired"
	ReasonMemberRemoved = "membership removed"
)

// revokeSubject carries the keys of revoked access between a cluster's
// nodes, so each ends its own subscriptions of it.
const revokeSubject = "agentsync.access.revoked"

func shareRevocationKey(shareID string) string { return "share\x00" + shareID }
func memberRevocationKey(sessionID, principal string) string {
	return "member\x00" + sessionID + "\x00" + principal
}

// revocations are the open subscriptions that a share link or a
// membership gave, by the key that ends them.
type revocations struct {
	mu   sync.Mutex
	subs map[string]map[*revocable]struct{}
	conn bus.Conn // nil: this node only
}

func (rv *revocations) add(key string, s *revocable) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.subs == nil {
		rv.subs = map[string]map[*revocable]struct{}{}
	}
	if rv.subs[key] == nil {
		rv.subs[key] = map[*revocable]struct{}{}
	}
	rv.subs[key][s] = struct{}{}
}

func (rv *revocations) remove(key string, s *revocable) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	delete(rv.subs[key], s)
	if len(rv.subs[key]) == 0 {
		delete(rv.subs, key)
	}
}

// local ends this node's subscriptions of key.
func (rv *revocations) local(key, reason string) {
	rv.mu.Lock()
	var ended []*revocable
	for s := range rv.subs[key] {
		ended = append(ended, s)
	}
	rv.mu.Unlock()
	for _, s := range ended {
		s.revoke(reason)
	}
}

// revoke ends key's subscriptions here and, through the bus, on every
// other node.
func (rv *revocations) revoke(key, reason string) {
	rv.local(key, reason)
	if rv.conn != nil {
		_ = rv.conn.Publish(revokeSubject, []byte(reason+"\n"+key))
	}
}

// listen ends this node's subscriptions of the keys other nodes revoke.
func (rv *revocations) listen() error {
	if rv.conn == nil {
		return nil
	}
	_, err := rv.conn.Subscribe(revokeSubject, func(m *bus.Msg) {
		for i, b := range m.Data {
			if b == '\n' {
				rv.local(string(m.Data[i+1:]), string(m.Data[:i]))
				return
			}
		}
	})
	return err
}

// revocable is a subscription that its access may end: it then ends with
// an error frame (CodeRevoked) numbered after the last frame sent.
type revocable struct {
	subscriber
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
	mu     sync.Mutex
	reason string
	last   uint64 // seq of the last frame handed out
	ended  bool
	timer  *time.Timer
}

func newRevocable(ctx context.Context, sub subscriber, expiresAt int64) *revocable {
	s := &revocable{subscriber: sub}
	s.ctx, s.cancel = context.WithCancel(ctx)
	if expiresAt != 0 {
		s.timer = time.AfterFunc(time.Until(time.UnixMilli(expiresAt)), func() { s.revoke(ReasonShareExpired) })
	}
	return s
}

func (s *revocable) revoke(reason string) {
	s.once.Do(func() {
		s.mu.Lock()
		s.reason = reason
		s.mu.Unlock()
		s.cancel()
	})
}

func (s *revocable) Next(_ context.Context) ([]synccore.Frame, error) {
	if s.isEnded() {
		return nil, io.EOF
	}
	return s.after(s.subscriber.Next(s.ctx))
}

func (s *revocable) Poll() ([]synccore.Frame, error) {
	if s.isEnded() {
		return nil, io.EOF
	}
	return s.after(s.subscriber.Poll())
}

// OnReady calls f when the subscription has frames, or is revoked.
func (s *revocable) OnReady(f func()) {
	stop := context.AfterFunc(s.ctx, f)
	s.subscriber.OnReady(func() {
		stop()
		f()
	})
}

func (s *revocable) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// after follows what the subscription returned with the error frame
// once it is revoked.
func (s *revocable) after(frames []synccore.Frame, err error) ([]synccore.Frame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(frames); n > 0 {
		s.last = frames[n-1].Seq
	}
	if s.reason != "" && s.ctx.Err() != nil && (err != nil || len(frames) == 0) {
		s.ended = true
		return append(frames, synccore.Frame{Seq: s.last + 1, Kind: synccore.FrameError, Code: CodeRevoked, Reason: s.reason}), nil
	}
	return frames, err
}

func (s *revocable) Close() {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.cancel()
	s.subscriber.Close()
}

// createShare: POST /v1/sessions/{id}/shares.
func (a *api) createShare(w http.ResponseWriter, r *http.Request) {
	var req httpwire.CreateShareRequest
	if _, err := a.decodeBodyOptional(w, r, &req); err != nil && r.ContentLength != 0 {
		if te, ok := asTyped(err); !ok || te.Code != synccore.CodeMalformed || te.Message != "empty body" {
			a.writeError(w, r, err)
			return
		}
	}
	switch req.Mode {
	case "":
		req.Mode = httpwire.ShareRead
	case httpwire.ShareRead, httpwire.ShareWrite:
	default:
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "mode must be read or write, got %q", req.Mode))
		return
	}
	if req.ExpiresAt < 0 || (req.ExpiresAt != 0 && req.ExpiresAt <= time.Now().UnixMilli()) {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "expires_at must be in the future (Unix ms)"))
		return
	}
	id, token := newShareToken()
	sh := store.Share{ShareID: id, SessionID: r.PathValue("id"), TokenHash: tokenHash(token), Mode: req.Mode,
		IncludeForks: req.IncludeForks, ExpiresAt: req.ExpiresAt, CreatedAt: time.Now().UnixMilli(), CreatedBy: principal(r.Context())}
	if err := a.mgr.Access().CreateShare(r.Context(), sh); err != nil {
		a.writeError(w, r, err)
		return
	}
	out := shareOut(sh)
	out.Token = token
	a.writeValue(w, r, http.StatusCreated, out)
}

func shareOut(sh store.Share) httpwire.Share {
	return httpwire.Share{ShareID: sh.ShareID, SessionID: sh.SessionID, Mode: sh.Mode, IncludeForks: sh.IncludeForks,
		ExpiresAt: sh.ExpiresAt, CreatedAt: sh.CreatedAt}
}

// listShares: GET /v1/sessions/{id}/shares.
func (a *api) listShares(w http.ResponseWriter, r *http.Request) {
	list, err := a.mgr.Access().ListShares(r.Context(), r.PathValue("id"))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	items := make([]httpwire.Share, 0, len(list))
	for _, sh := range list {
		items = append(items, shareOut(sh))
	}
	a.writeValue(w, r, http.StatusOK, itemsOf(items))
}

// deleteShare: DELETE /v1/sessions/{id}/shares/{share_id}. Its open
// subscriptions end at once, on every node.
func (a *api) deleteShare(w http.ResponseWriter, r *http.Request) {
	shareID := r.PathValue("share_id")
	if err := a.mgr.Access().DeleteShare(r.Context(), r.PathValue("id"), shareID); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.revoked.revoke(shareRevocationKey(shareID), ReasonShareRevoked)
	w.WriteHeader(http.StatusNoContent)
}

// listMembers: GET /v1/sessions/{id}/members, the owner first.
func (a *api) listMembers(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	owner, err := a.mgr.Owner(r.Context(), id)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	list, err := a.mgr.Access().ListMembers(r.Context(), id)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	items := []httpwire.Member{{Principal: owner, Role: httpwire.RoleOwner}}
	for _, m := range list {
		items = append(items, httpwire.Member{Principal: m.Principal, Role: m.Role, CreatedAt: m.CreatedAt})
	}
	a.writeValue(w, r, http.StatusOK, itemsOf(items))
}

// putMember: PUT /v1/sessions/{id}/members/{principal}.
func (a *api) putMember(w http.ResponseWriter, r *http.Request) {
	var req httpwire.PutMemberRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	id, p := r.PathValue("id"), r.PathValue("principal")
	if req.Role != httpwire.RoleEditor && req.Role != httpwire.RoleViewer {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "role must be editor or viewer, got %q", req.Role))
		return
	}
	owner, err := a.mgr.Owner(r.Context(), id)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	if p == "" || p == owner || p[0] == 0 {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "principal %q cannot be a member (the owner, or empty)", p))
		return
	}
	m := store.Member{SessionID: id, Principal: p, Role: req.Role}
	if err := a.mgr.Access().PutMember(r.Context(), m); err != nil {
		a.writeError(w, r, err)
		return
	}
	got, err := a.mgr.Access().Member(r.Context(), id, p)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.writeValue(w, r, http.StatusOK, httpwire.Member{Principal: got.Principal, Role: got.Role, CreatedAt: got.CreatedAt})
}

// deleteMember: DELETE /v1/sessions/{id}/members/{principal}. The former
// member's open subscriptions end at once, on every node.
func (a *api) deleteMember(w http.ResponseWriter, r *http.Request) {
	id, p := r.PathValue("id"), r.PathValue("principal")
	if err := a.mgr.Access().DeleteMember(r.Context(), id, p); err != nil {
		a.writeError(w, r, err)
		return
	}
	a.revoked.revoke(memberRevocationKey(id, p), ReasonMemberRemoved)
	w.WriteHeader(http.StatusNoContent)
}

type items[T any] struct {
	Items []T `json:"items" msgpack:"items"`
}

func itemsOf[T any](list []T) items[T] { return items[T]{Items: list} }
