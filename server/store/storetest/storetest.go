// Package storetest is the conformance suite of store.Store, like
// testing/fstest for file systems: every store implementation runs the same
// tests of the contract (commit rules, atomic batches, pages from one
// snapshot, random commits against a model, crash recovery, sessions and
// owners, summaries, titles, concurrency, leases and fencing):
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, name string) store.Store { ... })
//	}
//
// It also exports the message builders its tests use, for an
// implementation's own tests and benchmarks.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Opener opens a store for one test. The first call with a name in a test
// returns a store on new, empty data; a later call with the same name
// opens the same data again: after the test closed the first store, as a
// restarted server does, or beside it, as a second server node does. The
// opener closes what it opened when the test ends (Close is idempotent).
type Opener func(t *testing.T, name string) store.Store

// Run runs the whole suite against the stores open makes, each test as a
// subtest.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"CommitNewAndUpdate", testCommitNewAndUpdate},
		{"CommitRoundTripsEveryField", testCommitRoundTripsEveryField},
		{"CommitRules", testCommitRules},
		{"CommitBatchIsAtomic", testCommitBatchIsAtomic},
		{"CommitSameMessageTwiceInBatch", testCommitSameMessageTwiceInBatch},
		{"CommitFillsCreatedAt", testCommitFillsCreatedAt},
		{"CommitCancelledContext", testCommitCancelledContext},
		{"ReadersWhileWriterCommits", testReadersWhileWriterCommits},
		{"ConcurrentWritersSerialise", testConcurrentWritersSerialise},
		{"WritersRaceForTheNextSequence", testWritersRaceForTheNextSequence},
		{"ListOwnedSessions", testListOwnedSessions},
		{"PropertyRandomCommitsAndWalks", testPropertyRandomCommitsAndWalks},
		{"MessagesEmptySession", testMessagesEmptySession},
		{"MessagesExactPages", testMessagesExactPages},
		{"MessagesBeforeEdges", testMessagesBeforeEdges},
		{"MessagesInternal", testMessagesInternal},
		{"MessagesWalkReachesEveryMessageOnce", testMessagesWalkReachesEveryMessageOnce},
		{"RecoverStreaming", testRecoverStreaming},
		{"Sessions", testSessions},
		{"CommitTouch", testCommitTouch},
		{"EmptyListSessionsIsNotNil", testEmptyListSessionsIsNotNil},
		{"SummariesAndRange", testSummariesAndRange},
		{"SessionTitleRenameDelete", testSessionTitleRenameDelete},
		{"LeaseAcquireRenewRelease", testLeaseAcquireRenewRelease},
		{"LeaseFencesAStaleNode", testLeaseFencesAStaleNode},
		{"RecoverStreamingSkipsLeasedSessions", testRecoverStreamingSkipsLeasedSessions},
		{"LeaseRaceHasOneWinner", testLeaseRaceHasOneWinner},
		{"LeaseOrphanedSessions", testLeaseOrphanedSessions},
		{"Shares", testShares},
		{"Members", testMembers},
	}
	tests = append(tests, forkSuite...)
	tests = append(tests, searchSuite...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// NewSession creates a session named id.
func NewSession(t testing.TB, s store.Store, id string) {
	t.Helper()
	if err := s.CreateSession(context.Background(), store.Session{SessionID: id, Model: "scripted", ApprovalMode: "ask"}); err != nil {
		t.Fatalf("CreateSession(%q): %v", id, err)
	}
}

// UserMessage is user message msg-<seq> of one text part.
func UserMessage(sessionID string, seq int64, text string) synccore.Message {
	return synccore.Message{
		MessageID:  fmt.Sprintf("msg-%d", seq),
		SessionID:  sessionID,
		Sequence:   seq,
		Revision:   1,
		Role:       synccore.RoleUser,
		TurnID:     fmt.Sprintf("turn-%d", seq),
		Visibility: synccore.VisibilityVisible,
		CreatedAt:  1_700_000_000_000 + seq,
		Parts:      []synccore.Part{{PartID: "user-text:1", Sequence: 1, Type: synccore.PartText, Text: text}},
	}
}

// AgentMessage is streaming agent message msg-<seq> at revision 1.
func AgentMessage(sessionID string, seq int64, parts ...synccore.Part) synccore.Message {
	return synccore.Message{
		MessageID:  fmt.Sprintf("msg-%d", seq),
		SessionID:  sessionID,
		Sequence:   seq,
		Revision:   1,
		Role:       synccore.RoleAgent,
		State:      synccore.MessageStreaming,
		TurnID:     fmt.Sprintf("turn-%d", seq),
		Visibility: synccore.VisibilityVisible,
		CreatedAt:  1_700_000_000_000 + seq,
		Parts:      parts,
	}
}

// TextPart is text part text:<seq>.
func TextPart(seq int64, state synccore.PartState, text string) synccore.Part {
	return synccore.Part{PartID: fmt.Sprintf("text:%d", seq), Sequence: seq, Type: synccore.PartText, StepID: "step-1", State: state, Text: text}
}

// MustCommit commits msgs and fails the test on error.
func MustCommit(t testing.TB, s store.Store, sessionID string, msgs ...synccore.Message) {
	t.Helper()
	if err := s.Commit(context.Background(), sessionID, msgs); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// WantCode fails unless err is a *synccore.Error with code.
func WantCode(t testing.TB, err error, code string) {
	t.Helper()
	var se *synccore.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("error = %v, want code %q", err, code)
	}
}

func page(t testing.TB, s store.Store, sessionID string, q store.PageQuery) synccore.MessagePage {
	t.Helper()
	p, err := s.Messages(context.Background(), sessionID, q)
	if err != nil {
		t.Fatalf("Messages(%+v): %v", q, err)
	}
	return p
}

func sequences(msgs []synccore.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Sequence
	}
	return out
}
