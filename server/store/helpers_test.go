package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openTest opens a store on a fresh file in t.TempDir() and closes it at
// the end of the test.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "dir", "agentsync.db")
	s, err := Open(context.Background(), path, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

// newSession creates a session named id.
func newSession(t testing.TB, s *Store, id string) {
	t.Helper()
	if err := s.CreateSession(context.Background(), Session{SessionID: id, Model: "scripted", ApprovalMode: "ask"}); err != nil {
		t.Fatalf("CreateSession(%q): %v", id, err)
	}
}

func userMsg(sessionID string, seq int64, text string) synccore.Message {
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

func agentMsg(sessionID string, seq int64, parts ...synccore.Part) synccore.Message {
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

func textPart(seq int64, state, text string) synccore.Part {
	return synccore.Part{PartID: fmt.Sprintf("text:%d", seq), Sequence: seq, Type: synccore.PartText, StepID: "step-1", State: state, Text: text}
}

// mustCommit commits msgs and fails the test on error.
func mustCommit(t testing.TB, s *Store, sessionID string, msgs ...synccore.Message) {
	t.Helper()
	if err := s.Commit(context.Background(), sessionID, msgs); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// wantCode fails unless err is a *synccore.Error with code.
func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	var se *synccore.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("error = %v, want code %q", err, code)
	}
}

func page(t testing.TB, s *Store, sessionID string, q PageQuery) synccore.MessagePage {
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
