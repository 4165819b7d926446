package store

import (
	"context"
	"slices"

	"github.com/agentsync/agentsync/synccore"
)

// Forks: a conversation is a tree of sessions. A fork is a session made
// before a sequence k of its parent: messages 1..k-1 of its path are the
// parent's path, read by reference (never copied: done is final and every
// one of them is done), and its own messages are k, k+1... A page, a range
// or a history of a fork reads along its path; every message it returns
// carries the session_id of the session read (the path's), its other
// fields are the stored ones. See docs/protocol.md §"Conversation tree".

// Forker is the fork part of a Store.
type Forker interface {
	// ForkSession creates sess (its id, model, owner...) as a fork of
	// parent before sequence before: before outside 2..head+1 is
	// CodeBadRequest, a message before it that is not done is
	// CodeConflict. It returns the session as stored; it costs the same
	// whatever the length of the prefix.
	ForkSession(ctx context.Context, parentID string, before int64, sess Session) (Session, error)
	// Branches lists the alternatives at position sequence of the
	// session's path (1..head+1; CodeBadRequest otherwise), in the order
	// they were made.
	Branches(ctx context.Context, sessionID string, sequence int64) ([]Branch, error)
	// BranchCounts tells, for the positions from..to of the session's
	// path that have more than one alternative, how many and which one
	// the path takes, oldest position first.
	BranchCounts(ctx context.Context, sessionID string, from, to int64) ([]BranchCount, error)
}

// Branch is one alternative at a position of a path: the session that
// shows it (the session asked about when its path takes it) and its
// message at that position (nil for a fork that has none yet).
type Branch struct {
	SessionID string
	Index     int // 0-based, in the order the alternatives were made
	Message   *synccore.Message
}

// BranchCount is how many alternatives a position has and which of them
// (0-based) the session's path takes.
type BranchCount struct {
	Sequence int64 `json:"sequence" msgpack:"sequence"`
	Count    int   `json:"count" msgpack:"count"`
	Index    int   `json:"index" msgpack:"index"`
}

// Link is one session of a path's chain: the session itself first, then
// its parent, up to the root. Fork is the sequence the session was forked
// before (0 for the root).
type Link struct {
	SID  int64
	Fork int64
}

// Segment says that the messages From..To of a path are the rows of the
// session SID with those sequences.
type Segment struct {
	SID      int64
	From, To int64
}

// Segments turns a chain (the session first) and the session's head into
// its path's segments, newest first; empty ones are left out.
func Segments(chain []Link, head int64) []Segment {
	out := make([]Segment, 0, len(chain))
	to := head
	for _, l := range chain {
		from := max(l.Fork, 1)
		if from <= to {
			out = append(out, Segment{SID: l.SID, From: from, To: to})
		}
		to = min(to, from-1)
		if to < 1 {
			break
		}
	}
	return out
}

// Owner is the segment holding sequence seq, ok=false if none does.
func Owner(segs []Segment, seq int64) (Segment, bool) {
	for _, s := range segs {
		if s.From <= seq && seq <= s.To {
			return s, true
		}
	}
	return Segment{}, false
}

// Clip is segs restricted to from..to, newest first.
func Clip(segs []Segment, from, to int64) []Segment {
	out := make([]Segment, 0, len(segs))
	for _, s := range segs {
		s.From, s.To = max(s.From, from), min(s.To, to)
		if s.From <= s.To {
			out = append(out, s)
		}
	}
	return out
}

// Runs calls fn for each run of items (sorted by sequence, oldest first)
// held by one segment, so a store loads their parts from that session's
// rows.
func Runs(segs []Segment, items []synccore.Message, fn func(sid int64, run []synccore.Message) error) error {
	for i := 0; i < len(items); {
		seg, ok := Owner(segs, items[i].Sequence)
		if !ok {
			return synccore.Errorf(synccore.CodeInternal, "message %d is outside its path", items[i].Sequence)
		}
		j := i + 1
		for j < len(items) && items[j].Sequence <= seg.To {
			j++
		}
		if err := fn(seg.SID, items[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// CheckForkBefore checks a fork's before sequence against the parent's
// head.
func CheckForkBefore(before, head int64) error {
	if before < 2 || before > head+1 {
		return synccore.Errorf(synccore.CodeBadRequest,
			"before_sequence %d is outside 2..%d (a fork keeps at least the first message)", before, head+1)
	}
	return nil
}

// ErrForkNotDone is the answer to a fork before a message still streaming.
func ErrForkNotDone(sessionID string, seq int64) error {
	return synccore.Errorf(synccore.CodeConflict,
		"message %d of session %q is still streaming: a fork needs every message before it done", seq, sessionID)
}

// GroupMember is one session of the fork group at a position N: the
// session owning N-1 in the asked path, and every fork made before N of a
// member (see BranchesOf).
type GroupMember struct {
	SID       int64
	SessionID string
	Deleted   bool
	Head      int64
	UpdatedAt int64
}

// BranchesOf computes the alternatives at position n of a path from the
// fork group at n (members sorted by sid, the owner of n-1 first): each
// member that has a message at n is one alternative, shown by the asked
// session when its path takes it, else by the member, else (a deleted
// member) by the live session that rep returns ("" drops it). self is the
// sid owning n in the asked path (0: none) and selfID its id.
func BranchesOf(group []GroupMember, n, self int64, selfID string, rep func(m GroupMember) (string, error)) ([]Branch, []int64, error) {
	var out []Branch
	var owners []int64
	for _, g := range group {
		if g.Head < n && g.SessionID != selfID {
			continue
		}
		b := Branch{SessionID: g.SessionID}
		switch {
		case g.SID == self || g.SessionID == selfID:
			b.SessionID = selfID
		case g.Deleted:
			id, err := rep(g)
			if err != nil {
				return nil, nil, err
			}
			if id == "" {
				continue
			}
			b.SessionID = id
		}
		if g.Head < n {
			// The asked session, forked before n with nothing at n yet.
			owners = append(owners, 0)
		} else {
			owners = append(owners, g.SID)
		}
		b.Index = len(out)
		out = append(out, b)
	}
	return out, owners, nil
}

// CountOf turns alternatives into the position's BranchCount for selfID.
func CountOf(n int64, bs []Branch, selfID string) BranchCount {
	i := slices.IndexFunc(bs, func(b Branch) bool { return b.SessionID == selfID })
	return BranchCount{Sequence: n, Count: len(bs), Index: max(i, 0)}
}
