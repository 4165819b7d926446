// Package store defines how the server keeps agent sessions: the Store
// interface every storage engine implements, and the types it reads and
// writes. Implementations: store/sqlite (one file, one process: the
// default) and store/postgres (several server nodes on one database). The
// conformance suite in store/storetest runs against both.
//
// The contract every Store keeps (typed *synccore.Error otherwise, and
// nothing of the call is written):
//   - a Commit is one transaction: every message of the batch is written,
//     or none is;
//   - message sequences are per session, 1, 2, 3... without gaps (internal
//     messages included); a new message takes head + 1 at revision 1;
//   - a stored message's revision grows by exactly one per commit, and a
//     done message (every user message, a closed agent message) never
//     changes again; its sequence, role and visibility never change;
//   - part ids are unique in a message, part sequences are 1, 2, 3... and a
//     part keeps its sequence forever; parts not given in a commit are kept;
//   - only whole checkpoints are written: a part is stored as the full part
//     the caller gives, never as a delta to apply to a stored one;
//   - every read (a page, a message, a history, a range) comes from one
//     snapshot: a page never mixes two commits.
//
// Calls after Close fail with synccore.CodeClosed; an unknown session is
// synccore.CodeNotFound.
package store

import (
	"context"
	"slices"

	"github.com/agentsync/agentsync/synccore"
)

// Store is the storage the session engine runs on. Implementations are
// safe for concurrent use.
type Store interface {
	Leaser
	Forker
	Access
	Windower
	Searcher

	// CreateSession inserts a new, empty session. A zero CreatedAt becomes
	// now and a zero UpdatedAt becomes CreatedAt; HeadSequence is ignored.
	// An id already in use is CodeConflict, an empty one CodeBadRequest.
	CreateSession(ctx context.Context, sess Session) error
	// Session returns one session.
	Session(ctx context.Context, id string) (Session, error)
	// ListSessions returns up to limit sessions of every owner, most
	// recently active first (updated_at; ties newest created first).
	// limit <= 0 means 100; it is capped at 1000. Never nil.
	ListSessions(ctx context.Context, limit int) ([]Session, error)
	// ListOwnedSessions is ListSessions restricted to one owner.
	ListOwnedSessions(ctx context.Context, owner string, limit int) ([]Session, error)
	// UpdateSession changes a session's model and approval mode and sets
	// updated_at to sess.UpdatedAt, or now when that is zero.
	UpdateSession(ctx context.Context, sess Session) error
	// RenameSession sets a session's title (trimmed; empty or longer than
	// MaxTitleRunes is CodeBadRequest) without moving updated_at, and
	// returns the session as stored.
	RenameSession(ctx context.Context, id, title string) (Session, error)
	// DeleteSession removes a session with all its messages, parts and
	// summaries in one transaction. A session that forks still reference
	// becomes a tombstone instead: gone for every call (CodeNotFound), its
	// rows kept for the forks' paths until its last fork is deleted.
	DeleteSession(ctx context.Context, id string) error

	// Commit writes one checkpoint atomically under the rules above. A new
	// message's zero CreatedAt becomes now and an existing message keeps
	// its stored one; both are written back into msgs. An untitled session
	// takes the title of the batch's first visible user message (TitleFrom).
	// It moves the session's updated_at to now, at once when it adds a
	// message or changes one's state, and at most every TouchEvery when it
	// only extends streaming messages (Moves).
	Commit(ctx context.Context, sessionID string, msgs []synccore.Message) error

	// Messages reads one page from one snapshot: the newest q.Limit
	// messages with sequence < q.BeforeSequence (0: up to the head),
	// visible ones only unless q.IncludeInternal, oldest first.
	Messages(ctx context.Context, sessionID string, q PageQuery) (synccore.MessagePage, error)
	// Message reads one message with all its parts.
	Message(ctx context.Context, sessionID, messageID string) (synccore.Message, error)
	// History reads every message of a session, internal ones included.
	History(ctx context.Context, sessionID string) ([]synccore.Message, error)
	// Range reads the messages from..to (inclusive, clamped to 1..head),
	// internal ones included, oldest first.
	Range(ctx context.Context, sessionID string, from, to int64) ([]synccore.Message, error)

	// LatestSummary is the summary reaching furthest into the session;
	// ok=false if it has none.
	LatestSummary(ctx context.Context, sessionID string) (sum Summary, ok bool, err error)
	// PutSummary stores sum, replacing one with the same end. Its range
	// must lie within the session's committed messages (CodeBadRequest).
	PutSummary(ctx context.Context, sessionID string, sum Summary) error

	// RecoverStreaming closes every agent message left streaming by a
	// crash (see RecoverMessage), one transaction per message, and returns
	// the recovered messages in session and sequence order.
	RecoverStreaming(ctx context.Context, mkErr func(m synccore.Message) synccore.Part) ([]synccore.Message, error)

	// CommitCount is how many writes this Store value has committed since
	// it was opened, each atomically (a transaction of its own, or one
	// write of a group commit): a metric, which the conformance suite also
	// uses to check that one Commit is one atomic write.
	CommitCount() int64

	// Close waits for calls in flight and releases the store. Closing a
	// closed store does nothing.
	Close() error
}

// Pinger is a Store that can tell cheaply whether it is reachable now
// (readiness: server's /readyz). sqlite and postgres stores implement it;
// for a Store that does not, readiness reads one session instead.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Session is one session's row.
type Session struct {
	SessionID    string `json:"session_id" msgpack:"session_id"`
	Model        string `json:"model" msgpack:"model"`
	ApprovalMode string `json:"approval_mode" msgpack:"approval_mode"`
	CreatedAt    int64  `json:"created_at" msgpack:"created_at"`
	UpdatedAt    int64  `json:"updated_at" msgpack:"updated_at"`
	HeadSequence int64  `json:"head_sequence" msgpack:"head_sequence"`
	// Title is set from the first user message's text (TitleFrom) and by
	// RenameSession; "" until then.
	Title string `json:"title" msgpack:"title"`
	// Owner is the principal the session belongs to; "" is the shared
	// principal (a server without per-user auth). Set at creation only.
	Owner string `json:"owner,omitempty" msgpack:"owner,omitempty"`

	// ParentSessionID is the session a fork was made from ("" for a
	// conversation's root; it may have been deleted since), ForkSequence
	// the sequence it was forked before (0 for a root): messages
	// 1..ForkSequence-1 of its path are the parent's. RootSessionID is the
	// conversation's root (a root's own id). Set by ForkSession only.
	ParentSessionID string `json:"parent_session_id,omitempty" msgpack:"parent_session_id,omitempty"`
	ForkSequence    int64  `json:"fork_sequence,omitempty" msgpack:"fork_sequence,omitempty"`
	RootSessionID   string `json:"root_session_id,omitempty" msgpack:"root_session_id,omitempty"`
}

// PageQuery is one messages() read. Limit is validated (1..200) by the
// caller; a store still reads the default page for Limit <= 0 and caps a
// larger one. BeforeSequence 0 means "up to the head".
type PageQuery struct {
	Limit           int
	BeforeSequence  int64
	IncludeInternal bool
	// AroundSequence and AfterSequence are Window's other cursors
	// (Messages ignores them).
	AroundSequence int64
	AfterSequence  int64
}

// Summary stands for the messages FromSequence..ToSequence of a session in
// a model's context. It is derived data of the composer policy: it has no
// sequence, is never a message and never appears in a page.
type Summary struct {
	FromSequence int64
	ToSequence   int64
	Text         string
	Model        string // the model that wrote it
	CreatedAt    int64  // Unix ms
}

// Default and maximum of ListSessions' limit.
const (
	DefaultSessionLimit = 100
	MaxSessionLimit     = 1000
)

// SessionLimit applies ListSessions' default and cap to limit.
func SessionLimit(limit int) int {
	if limit <= 0 {
		limit = DefaultSessionLimit
	}
	return min(limit, MaxSessionLimit)
}

// PageLimit applies Messages' default and cap to limit, so no value turns
// into an unbounded read.
func PageLimit(limit int) int {
	if limit <= 0 {
		limit = synccore.DefaultPageLimit
	}
	return min(limit, synccore.MaxPageLimit)
}

// PageBefore is the exclusive upper sequence of a page read at head: q's
// BeforeSequence, or head+1 (up to the newest) when it is unset or past it.
func PageBefore(q PageQuery, head int64) int64 {
	if q.BeforeSequence <= 0 || q.BeforeSequence > head {
		return head + 1
	}
	return q.BeforeSequence
}

// PageOf turns the rows of a page query, newest first and up to limit+1 of
// them (the extra one tells that older ones remain), into the page: at most
// limit items, oldest first, with its bounds. The items share newestFirst's
// array, so a store may fill their parts afterwards.
func PageOf(total int64, newestFirst []synccore.Message, limit int) synccore.MessagePage {
	page := synccore.MessagePage{Items: newestFirst, Total: total}
	if page.Items == nil {
		page.Items = []synccore.Message{}
	}
	if len(page.Items) > limit {
		page.HasMore = true
		page.Items = page.Items[:limit]
	}
	slices.Reverse(page.Items)
	if n := len(page.Items); n > 0 {
		page.StartSequence = page.Items[0].Sequence
		page.EndSequence = page.Items[n-1].Sequence
		if page.HasMore {
			page.NextBeforeSequence = page.StartSequence
		}
	}
	return page
}

// ErrClosed is the typed answer of a closed store, a fresh error each time
// (callers may keep or change it).
func ErrClosed() error { return synccore.Errorf(synccore.CodeClosed, "store is closed") }

// ErrNoSession is the typed answer for an unknown session id.
func ErrNoSession(id string) error {
	return synccore.Errorf(synccore.CodeNotFound, "session %q not found", id)
}

// ErrNoMessage is the typed answer for an unknown message id.
func ErrNoMessage(sessionID, messageID string) error {
	return synccore.Errorf(synccore.CodeNotFound, "message %q not found in session %q", messageID, sessionID)
}
