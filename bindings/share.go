package bindings

import (
	"context"
	"net/http"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
)

// Share is a session's share link (docs/protocol.md §3.3); Token is set
// only in CreateShare's answer.
type Share = httpwire.Share

// ShareOptions are what CreateShare asks for: Mode ShareRead (empty: the
// default) or ShareWrite, IncludeForks, ExpiresAt (Unix ms; 0: never).
type ShareOptions = httpwire.CreateShareRequest

// Member is one member of a session, with its role.
type Member = httpwire.Member

// Share modes and member roles.
const (
	ShareRead  = httpwire.ShareRead
	ShareWrite = httpwire.ShareWrite
	RoleOwner  = httpwire.RoleOwner
	RoleEditor = httpwire.RoleEditor
	RoleViewer = httpwire.RoleViewer
)

// CreateShare makes a share link of a session (owner only). Its Token
// opens the session: as API.Token or Config.Token of a client, since the
// server takes a bearer token that starts with httpwire.SharePrefix as a
// share link.
func (a *API) CreateShare(ctx context.Context, sessionID string, opts ShareOptions) (Share, error) {
	var sh Share
	err := a.do(ctx, http.MethodPost, sessionPath(sessionID, "shares"), nil, opts, &sh)
	return sh, err
}

// Shares lists a session's share links, without their tokens (owner only).
func (a *API) Shares(ctx context.Context, sessionID string) ([]Share, error) {
	var list struct {
		Items []Share `msgpack:"items"`
	}
	err := a.do(ctx, http.MethodGet, sessionPath(sessionID, "shares"), nil, nil, &list)
	return list.Items, err
}

// RevokeShare revokes a share link: its open subscriptions end (error
// frame code "revoked") and the token is refused from then on.
func (a *API) RevokeShare(ctx context.Context, sessionID, shareID string) error {
	return a.do(ctx, http.MethodDelete, sessionPath(sessionID, "shares", shareID), nil, nil, nil)
}

// Members lists a session's owner (first) and members.
func (a *API) Members(ctx context.Context, sessionID string) ([]Member, error) {
	var list struct {
		Items []Member `msgpack:"items"`
	}
	err := a.do(ctx, http.MethodGet, sessionPath(sessionID, "members"), nil, nil, &list)
	return list.Items, err
}

// SetMember adds principal to a session as RoleEditor or RoleViewer, or
// changes its role (owner only).
func (a *API) SetMember(ctx context.Context, sessionID, principal, role string) (Member, error) {
	var m Member
	err := a.do(ctx, http.MethodPut, sessionPath(sessionID, "members", principal), nil, httpwire.PutMemberRequest{Role: role}, &m)
	return m, err
}

// RemoveMember removes a member: its open subscriptions end (error frame
// code "revoked") and the session is not_found to it again.
func (a *API) RemoveMember(ctx context.Context, sessionID, principal string) error {
	return a.do(ctx, http.MethodDelete, sessionPath(sessionID, "members", principal), nil, nil, nil)
}

// Author is who wrote a user message: ok=false for the session's owner
// (whose messages carry no author part); else the member's Principal or
// the ShareID of the write link it came through.
func Author(m synccore.Message) (author httpwire.Author, ok bool) {
	for _, p := range m.Parts {
		if p.Type != synccore.PartData || p.DataType != httpwire.DataTypeAuthor {
			continue
		}
		if d, isMap := p.Data.(map[string]any); isMap {
			author.Principal, _ = d["principal"].(string)
			author.ShareID, _ = d["share_id"].(string)
		}
		return author, true
	}
	return author, false
}
