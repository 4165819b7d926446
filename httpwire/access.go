package httpwire

// DataTypeAuthor is the data_type of the part the server adds to a user
// message another principal than the session's owner posted (a member, or
// a read-write share link): {"principal": "<principal>"} for a member,
// {"share_id": "<share id>"} for a share link. A message without it was
// written by the session's owner. Clients cannot post it themselves (400
// invalid_part).
const DataTypeAuthor = "agentsync.author"

// Author is the data of an author part (DataTypeAuthor).
type Author struct {
	Principal string `msgpack:"principal,omitempty" json:"principal,omitempty"`
	ShareID   string `msgpack:"share_id,omitempty" json:"share_id,omitempty"`
}

// SharePrefix starts every share link token: a bearer token that starts
// with it is a share token, not the server's authorizer's.
const SharePrefix = "ash_"

// Share link modes (CreateShareRequest.Mode).
const (
	ShareRead  = "read"  // pages and subscribe
	ShareWrite = "write" // also post, answer interactions and act
)

// Member roles (PutMemberRequest.Role; the owner is the session's owner).
const (
	RoleOwner  = "owner"
	RoleEditor = "editor"
	RoleViewer = "viewer"
)

// CreateShareRequest is the body of POST /v1/sessions/{id}/shares.
type CreateShareRequest struct {
	// Mode is ShareRead (empty: the default) or ShareWrite.
	Mode string `msgpack:"mode,omitempty" json:"mode,omitempty"`
	// IncludeForks lets the link read the other sessions of the
	// conversation (its forks, their parents) too.
	IncludeForks bool `msgpack:"include_forks,omitempty" json:"include_forks,omitempty"`
	// ExpiresAt (Unix ms, in the future) ends the link; 0: never.
	ExpiresAt int64 `msgpack:"expires_at,omitempty" json:"expires_at,omitempty"`
}

// Share is one share link as the API answers it; Token only in the
// answer to its creation (the server keeps only its hash).
type Share struct {
	ShareID      string `msgpack:"share_id" json:"share_id"`
	SessionID    string `msgpack:"session_id" json:"session_id"`
	Mode         string `msgpack:"mode" json:"mode"`
	IncludeForks bool   `msgpack:"include_forks" json:"include_forks"`
	ExpiresAt    int64  `msgpack:"expires_at,omitempty" json:"expires_at,omitempty"`
	CreatedAt    int64  `msgpack:"created_at" json:"created_at"`
	Token        string `msgpack:"token,omitempty" json:"token,omitempty"`
}

// PutMemberRequest is the body of PUT /v1/sessions/{id}/members/{principal}.
type PutMemberRequest struct {
	Role string `msgpack:"role" json:"role"` // RoleEditor or RoleViewer
}

// Member is one member of a session as the API answers it.
type Member struct {
	Principal string `msgpack:"principal" json:"principal"`
	Role      string `msgpack:"role" json:"role"`
	CreatedAt int64  `msgpack:"created_at,omitempty" json:"created_at,omitempty"`
}
