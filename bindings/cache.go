package bindings

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/agentsync/agentsync/synccore"
)

// Cache is where a host keeps what it has seen of sessions, and the sends
// it has not posted yet, on the device (docs/protocol.md §6.9): the Go
// counterpart of the JS host's CacheStore (js/cache.js), with the same
// semantics. Windows are kept per principal, session and include_internal
// (CacheKey), outbox entries per principal and session. Done is final: a
// cached message that is done is valid for ever; one that is not is a hint
// the server's answer replaces.
//
// The package bindings/cache implements it on a SQLite file; bindings
// itself does not link SQLite. Implementations are safe for concurrent use.
type Cache interface {
	// LoadWindow returns the window kept under key, oldest first; ok is
	// false when there is none.
	LoadWindow(ctx context.Context, key CacheKey) (w CachedWindow, ok bool, err error)
	// WriteWindow sets the window's meta, puts the messages of put (by
	// sequence, replacing one kept at that sequence) and, when keepFrom >
	// 0, drops the kept messages below keepFrom (the size bound).
	WriteWindow(ctx context.Context, key CacheKey, meta WindowMeta, put []synccore.Message, keepFrom int64) error
	// DeleteWindow drops the window under key (a 404, a delete, a stale one).
	DeleteWindow(ctx context.Context, key CacheKey) error
	// Outbox returns principal's unposted sends of sessionID, in order.
	Outbox(ctx context.Context, principal, sessionID string) ([]OutboxEntry, error)
	// PutOutbox keeps e (by its ID), replacing a kept one with that ID.
	PutOutbox(ctx context.Context, principal, sessionID string, e OutboxEntry) error
	// DeleteOutbox drops the entry id.
	DeleteOutbox(ctx context.Context, principal, sessionID, id string) error
	// Principal is the principal the cache was last used by ("" at first);
	// SetPrincipal records it. A host clears the other principals' windows
	// and outboxes when it changes (§6.9 "Keyed by principal").
	Principal(ctx context.Context) (string, error)
	SetPrincipal(ctx context.Context, principal string) error
	// Clear drops every window and outbox entry of principal, or of every
	// principal when principal is "" (a sign-out: ClearCache).
	Clear(ctx context.Context, principal string) error
}

// CacheKey names one cached window.
type CacheKey struct {
	Principal       string
	SessionID       string
	IncludeInternal bool
}

// WindowMeta is what a window says beside its messages: the view's total
// and where older history starts, as when it was written.
type WindowMeta struct {
	Total              int64 `msgpack:"total"`
	HasMoreOlder       bool  `msgpack:"has_more_older"`
	NextBeforeSequence int64 `msgpack:"next_before_sequence,omitempty"`
	IncludeInternal    bool  `msgpack:"include_internal,omitempty"`
	// SavedAt is when it was written, Unix milliseconds.
	SavedAt int64 `msgpack:"saved_at"`
}

// CachedWindow is a window as kept: its meta and its messages, oldest first.
type CachedWindow struct {
	Meta     WindowMeta
	Messages []synccore.Message
}

// Outbox entry states (OutboxEntry.State), as the JS host names them.
const (
	OutboxQueued  = "queued"  // waits to be posted (offline, or behind another)
	OutboxSending = "sending" // being posted; after a restart, queued again (its key makes the resend safe)
	OutboxFailed  = "failed"  // refused by the server; retried (same key) or discarded by the user
)

// OutboxEntry is one send kept before it is posted, with the
// Idempotency-Key every post of it carries (§3 Posting), so a post whose
// answer was lost, posted again after a restart, commits nothing twice.
type OutboxEntry struct {
	ID             string              `msgpack:"id"`
	IdempotencyKey string              `msgpack:"idempotency_key"`
	Parts          []synccore.Part     `msgpack:"parts"`
	Visibility     synccore.Visibility `msgpack:"visibility,omitempty"`
	Delivery       Delivery            `msgpack:"delivery,omitempty"`
	// CreatedAt is when it was sent, Unix milliseconds; Order sorts the
	// outbox (posted in this order, one at a time).
	CreatedAt int64  `msgpack:"created_at"`
	Order     int64  `msgpack:"order"`
	State     string `msgpack:"state"`
	// Error is why the server refused it (State failed).
	Error string `msgpack:"error,omitempty"`
}

// CachePrincipal is who a cache belongs to for a bearer token, as the JS
// host's principalOf names it: "sub:<sub>" for a JWT with a sub claim
// (read, not verified: the server verifies), "token:<hex>" (the first 12
// bytes of the token's SHA-256) for any other token, "shared" without one.
// A device's cache never serves one principal another's sessions.
func CachePrincipal(token string) string {
	if token == "" {
		return "shared"
	}
	if parts := strings.Split(token, "."); len(parts) == 3 {
		if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "=")); err == nil {
			var claims struct {
				Sub any `json:"sub"`
			}
			if json.Unmarshal(b, &claims) == nil {
				if s, ok := claims.Sub.(string); ok && s != "" {
					return "sub:" + s
				}
			}
		}
	}
	d := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(d[:12])
}
