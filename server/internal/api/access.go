package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// level is what a request does to a session (docs/protocol.md §3.3).
type level int

const (
	levelRead  level = iota // pages, branches, subscribe, files
	levelWrite              // post, answer, act, stop
	levelOwn                // rename, delete, fork, shares, members
)

// sharePrincipal starts the principal of a request made with a share
// link: "\x00share:" and the hex SHA-256 of its token. No authorizer may
// answer a principal that starts with NUL (authorize refuses it), so it
// is nobody's, and a forwarded request names the share by it.
const sharePrincipal = "\x00share:"

type shareKey struct{}

// shareToken is the share link token r bears: ?share=, or a bearer token
// (header, or ?token= where the query is allowed) with the share prefix.
func shareToken(r *http.Request, allowQuery bool) string {
	if tok := r.URL.Query().Get("share"); tok != "" {
		return tok
	}
	if tok := bearerToken(r, allowQuery); strings.HasPrefix(tok, httpwire.SharePrefix) {
		return tok
	}
	return ""
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// errBadShare refuses an unknown, revoked or expired share token, the
// same for each.
func errBadShare() error {
	return synccore.Errorf(synccore.CodeUnauthorized, "unknown, revoked or expired share link")
}

// resolveShare finds the live share of hash, or errBadShare.
func (a *api) resolveShare(ctx context.Context, hash []byte) (store.Share, error) {
	sh, err := a.mgr.Access().ShareByToken(ctx, hash)
	if err != nil {
		if te, ok := asTyped(err); ok && te.Code == synccore.CodeNotFound {
			return store.Share{}, errBadShare()
		}
		return store.Share{}, err
	}
	if sh.ExpiresAt != 0 && time.Now().UnixMilli() >= sh.ExpiresAt {
		return store.Share{}, errBadShare()
	}
	return sh, nil
}

// authorizeShare resolves a request bearing a share token: its principal
// is the share's, and its context carries the share.
func (a *api) authorizeShare(r *http.Request, token string) (*http.Request, error) {
	hash := tokenHash(token)
	sh, err := a.resolveShare(r.Context(), hash)
	if err != nil {
		a.log.Debug("share refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", err)
		return nil, err
	}
	ctx := context.WithValue(r.Context(), principalKey{}, sharePrincipal+hex.EncodeToString(hash))
	return r.WithContext(context.WithValue(ctx, shareKey{}, &sh)), nil
}

// shareOf is the share a request acts through, if any: the one the guard
// resolved, or for a request forwarded from another node, the one its
// principal names (looked up again: a revoked one is refused here too).
func (a *api) shareOf(ctx context.Context) (*store.Share, bool, error) {
	p := principal(ctx)
	hexHash, ok := strings.CutPrefix(p, sharePrincipal)
	if !ok {
		return nil, false, nil
	}
	if sh, ok := ctx.Value(shareKey{}).(*store.Share); ok {
		return sh, true, nil
	}
	hash, err := hex.DecodeString(hexHash)
	if err != nil {
		return nil, true, errBadShare()
	}
	sh, err := a.resolveShare(ctx, hash)
	if err != nil {
		return nil, true, err
	}
	return &sh, true, nil
}

// isShare reports whether the request acts through a share link.
func isShare(ctx context.Context) bool { return strings.HasPrefix(principal(ctx), sharePrincipal) }

func notFound(id string) error {
	return synccore.Errorf(synccore.CodeNotFound, "session %q not found", id)
}

// grant is what checkAccess found: who the caller is to the session.
type grant struct {
	share *store.Share // set for a share link
	role  string       // httpwire.Role*: the caller's role (a share's: editor or viewer)
}

// checkAccess decides whether the request's caller may do lvl to session
// id: its owner may do everything; a member as its role says; a share
// link as its mode says, on its session (and, for a read link with
// include_forks, its conversation's other sessions). A session the caller
// has nothing to do with is 404 exactly as an unknown one; something its
// role or link does not allow is 403 forbidden. Nothing is changed.
func (a *api) checkAccess(ctx context.Context, id string, lvl level) (grant, error) {
	owner, err := a.mgr.Owner(ctx, id)
	if err != nil {
		return grant{}, err
	}
	sh, viaShare, err := a.shareOf(ctx)
	if err != nil {
		return grant{}, err
	}
	if viaShare {
		g := grant{share: sh, role: httpwire.RoleViewer}
		if sh.Mode == store.ShareWrite {
			g.role = httpwire.RoleEditor
		}
		if sh.SessionID != id {
			if !sh.IncludeForks || !a.sameConversation(ctx, sh.SessionID, id) {
				return grant{}, notFound(id)
			}
			if lvl != levelRead {
				return grant{}, synccore.Errorf(synccore.CodeForbidden, "this share link only reads the conversation's other sessions")
			}
			return grant{share: sh, role: httpwire.RoleViewer}, nil
		}
		return g, allowed(g.role, lvl, "this share link")
	}
	p := principal(ctx)
	if p == owner {
		return grant{role: httpwire.RoleOwner}, nil
	}
	m, err := a.mgr.Access().Member(ctx, id, p)
	if err != nil {
		if te, ok := asTyped(err); ok && te.Code == synccore.CodeNotFound {
			return grant{}, notFound(id)
		}
		return grant{}, err
	}
	return grant{role: m.Role}, allowed(m.Role, lvl, "a "+m.Role)
}

// allowed says whether role may do lvl: 403 forbidden if not.
func allowed(role string, lvl level, who string) error {
	switch {
	case lvl == levelRead,
		lvl == levelWrite && (role == httpwire.RoleEditor || role == httpwire.RoleOwner),
		lvl == levelOwn && role == httpwire.RoleOwner:
		return nil
	case lvl == levelWrite:
		return synccore.Errorf(synccore.CodeForbidden, "%s may only read this session", who)
	}
	return synccore.Errorf(synccore.CodeForbidden, "only the session's owner may do this")
}

// sameConversation reports whether sessions a and b have the same root.
func (a *api) sameConversation(ctx context.Context, x, y string) bool {
	rx, err := a.mgr.Root(ctx, x)
	if err != nil {
		return false
	}
	ry, err := a.mgr.Root(ctx, y)
	return err == nil && rx == ry
}

type grantKey struct{}

// grantOf is the grant checkAccess gave the request (can).
func grantOf(ctx context.Context) grant {
	g, _ := ctx.Value(grantKey{}).(grant)
	return g
}

// can wraps a handler of /v1/sessions/{id}/... or /v1/chat/{id}/... with
// checkAccess at lvl; the handler finds the grant with grantOf.
func (a *api) can(lvl level, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g, err := a.checkAccess(r.Context(), r.PathValue("id"), lvl)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	}
}

// personal refuses share links on routes that are not about one session
// (creating and listing sessions, uploads): a link opens its session only.
func (a *api) personal(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if isShare(r.Context()) {
			a.writeError(w, r, synccore.Errorf(synccore.CodeForbidden, "a share link opens its session only"))
			return
		}
		next(w, r)
	}
}

// authorPart is the part recording who posted a user message, for a
// caller that is not the session's owner; ok=false for the owner.
func authorPart(ctx context.Context, g grant) (synccore.Part, bool) {
	var au httpwire.Author
	switch {
	case g.share != nil:
		au.ShareID = g.share.ShareID
	case g.role != httpwire.RoleOwner:
		au.Principal = principal(ctx)
	default:
		return synccore.Part{}, false
	}
	data := map[string]any{}
	if au.ShareID != "" {
		data["share_id"] = au.ShareID
	} else {
		data["principal"] = au.Principal
	}
	return synccore.Part{Type: synccore.PartData, DataType: httpwire.DataTypeAuthor, DataID: "author", Data: data}, true
}

// withAuthor refuses client-made author parts and adds the caller's.
func withAuthor(ctx context.Context, g grant, parts []synccore.Part) ([]synccore.Part, error) {
	for _, p := range parts {
		if p.Type == synccore.PartData && p.DataType == httpwire.DataTypeAuthor {
			return nil, synccore.Errorf(synccore.CodeInvalidPart, "a %s part is the server's", httpwire.DataTypeAuthor)
		}
	}
	if p, ok := authorPart(ctx, g); ok {
		return append(parts[:len(parts):len(parts)], p), nil
	}
	return parts, nil
}

// newShareToken makes a share link's id and its token.
func newShareToken() (id, token string) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	token = httpwire.SharePrefix + base64.RawURLEncoding.EncodeToString(b[:])
	var i [8]byte
	_, _ = rand.Read(i[:])
	return "sh_" + hex.EncodeToString(i[:]), token
}
