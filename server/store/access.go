package store

import (
	"context"

	"github.com/agentsync/agentsync/httpwire"
)

// Access keeps who besides a session's owner may use it (docs/protocol.md
// §3.3): share links (capabilities bearing a token) and members (principals
// with a role). A session's shares and members go with it when it is
// deleted. Unknown sessions are CodeNotFound for the writes; the reads
// answer what is stored.
type Access interface {
	// CreateShare stores a share link of an existing session
	// (CodeNotFound otherwise). An empty ShareID or TokenHash is
	// CodeBadRequest, an id or token hash in use CodeConflict. A zero
	// CreatedAt becomes now.
	CreateShare(ctx context.Context, sh Share) error
	// ShareByToken returns the share whose TokenHash is tokenHash, of a
	// session not deleted; CodeNotFound if none (revoked, never made).
	ShareByToken(ctx context.Context, tokenHash []byte) (Share, error)
	// ListShares returns a session's shares, oldest first; never nil.
	ListShares(ctx context.Context, sessionID string) ([]Share, error)
	// DeleteShare revokes one share of a session; CodeNotFound if the
	// session has no such share.
	DeleteShare(ctx context.Context, sessionID, shareID string) error

	// PutMember adds a member to an existing session or changes its role
	// (CodeNotFound for an unknown session). A zero CreatedAt becomes now;
	// a role change keeps the stored one.
	PutMember(ctx context.Context, m Member) error
	// Member returns one member; CodeNotFound if principal is none.
	Member(ctx context.Context, sessionID, principal string) (Member, error)
	// ListMembers returns a session's members, oldest first; never nil.
	ListMembers(ctx context.Context, sessionID string) ([]Member, error)
	// DeleteMember removes a member; CodeNotFound if principal is none.
	DeleteMember(ctx context.Context, sessionID, principal string) error
}

// Share modes and member roles are the wire's (httpwire): the store keeps
// the strings the API speaks. The owner is the session's Owner, not a
// stored member.
const (
	ShareRead  = httpwire.ShareRead
	ShareWrite = httpwire.ShareWrite
	RoleOwner  = httpwire.RoleOwner
	RoleEditor = httpwire.RoleEditor
	RoleViewer = httpwire.RoleViewer
)

// Share is one share link of a session: a capability its token bears. The
// token itself is never stored, only its SHA-256 (TokenHash).
type Share struct {
	ShareID   string `json:"share_id" msgpack:"share_id"`
	SessionID string `json:"session_id" msgpack:"session_id"`
	// Mode is ShareRead or ShareWrite.
	Mode string `json:"mode" msgpack:"mode"`
	// IncludeForks lets a read share read the other sessions of the
	// session's conversation (its forks and their parents) too.
	IncludeForks bool `json:"include_forks" msgpack:"include_forks"`
	// ExpiresAt (Unix ms) ends the share; 0: never.
	ExpiresAt int64  `json:"expires_at,omitempty" msgpack:"expires_at,omitempty"`
	CreatedAt int64  `json:"created_at" msgpack:"created_at"`
	CreatedBy string `json:"created_by,omitempty" msgpack:"created_by,omitempty"`
	TokenHash []byte `json:"-" msgpack:"-"`
}

// Member is one principal's role in a session.
type Member struct {
	SessionID string `json:"session_id" msgpack:"session_id"`
	Principal string `json:"principal" msgpack:"principal"`
	Role      string `json:"role" msgpack:"role"`
	CreatedAt int64  `json:"created_at" msgpack:"created_at"`
}
