package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

func testSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")

	_, err := s.Session(ctx, "nope")
	WantCode(t, err, "not_found")
	WantCode(t, s.CreateSession(ctx, store.Session{}), "bad_request")

	for i, id := range []string{"a", "b", "c"} {
		if err := s.CreateSession(ctx, store.Session{SessionID: id, Model: "m", CreatedAt: int64(1000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	WantCode(t, s.CreateSession(ctx, store.Session{SessionID: "b"}), "conflict")

	list, err := s.ListSessions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].SessionID != "c" || list[2].SessionID != "a" {
		t.Fatalf("ListSessions = %+v, want c, b, a", list)
	}
	if list, _ := s.ListSessions(ctx, 2); len(list) != 2 {
		t.Fatalf("ListSessions(2) returned %d", len(list))
	}

	got, err := s.Session(ctx, "b")
	if err != nil || got.Model != "m" || got.CreatedAt != 1001 || got.UpdatedAt != 1001 || got.HeadSequence != 0 {
		t.Fatalf("Session(b) = %+v, %v", got, err)
	}

	if err := s.UpdateSession(ctx, store.Session{SessionID: "b", Model: "m2", ApprovalMode: "auto", UpdatedAt: 5000}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Session(ctx, "b")
	if got.Model != "m2" || got.ApprovalMode != "auto" || got.UpdatedAt != 5000 || got.CreatedAt != 1001 {
		t.Fatalf("after update: %+v", got)
	}
	WantCode(t, s.UpdateSession(ctx, store.Session{SessionID: "zz"}), "not_found")

	MustCommit(t, s, "b", UserMessage("b", 1, "hi"), AgentMessage("b", 2))
	got, _ = s.Session(ctx, "b")
	if got.HeadSequence != 2 || got.UpdatedAt < 5000 {
		t.Fatalf("after commit: %+v", got)
	}
}

func testEmptyListSessionsIsNotNil(t *testing.T, open Opener) {
	s := open(t, "main")
	list, err := s.ListSessions(context.Background(), 10)
	if err != nil || list == nil || len(list) != 0 {
		t.Fatalf("ListSessions on empty store = %#v, %v", list, err)
	}
}

// testCommitTouch checks when a commit moves updated_at (store.Moves): a
// new message or a change of state at once, a checkpoint that only
// extends a streaming message only once updated_at is store.TouchEvery
// old. Four sessions run it at once, so that a store that groups the
// commits that meet (PostgreSQL) runs its group path too, not only alone.
func testCommitTouch(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	// A minute ahead: never store.TouchEvery old, however slow the machine.
	future := time.Now().UnixMilli() + 60_000
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- touchSequence(ctx, s, fmt.Sprintf("touch-%d", i), future)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// touchSequence plays testCommitTouch on one session.
func touchSequence(ctx context.Context, s store.Store, id string, future int64) error {
	if err := s.CreateSession(ctx, store.Session{SessionID: id, Model: "m", ApprovalMode: "ask", CreatedAt: 1000}); err != nil {
		return err
	}
	setUpdated := func(at int64) error {
		return s.UpdateSession(ctx, store.Session{SessionID: id, Model: "m", ApprovalMode: "ask", UpdatedAt: at})
	}
	m := AgentMessage(id, 1)
	m.Revision = 0
	// commit writes m's next revision (the first: revision 1), done when
	// done, and returns updated_at after it.
	commit := func(text string, done bool) (int64, error) {
		m.Revision++
		m.Parts = []synccore.Part{TextPart(1, "streaming", text)}
		if done {
			m.State, m.Parts[0].State = synccore.MessageDone, "done"
		}
		if err := s.Commit(ctx, id, []synccore.Message{m}); err != nil {
			return 0, fmt.Errorf("%s: commit revision %d: %w", id, m.Revision, err)
		}
		got, err := s.Session(ctx, id)
		return got.UpdatedAt, err
	}
	start := time.Now().UnixMilli()
	if at, err := commit("a", false); err != nil || at < start {
		return fmt.Errorf("%s: a new message left updated_at at %d (before %d), %v", id, at, start, err)
	}
	if err := setUpdated(future); err != nil {
		return err
	}
	if at, err := commit("ab", false); err != nil || at != future {
		return fmt.Errorf("%s: a checkpoint within TouchEvery moved updated_at from %d to %d, %v", id, future, at, err)
	}
	if err := setUpdated(5000); err != nil {
		return err
	}
	if at, err := commit("abc", false); err != nil || at < start {
		return fmt.Errorf("%s: a checkpoint after TouchEvery left updated_at at %d (before %d), %v", id, at, start, err)
	}
	if err := setUpdated(future); err != nil {
		return err
	}
	if at, err := commit("abcd", true); err != nil || at == future || at < start {
		return fmt.Errorf("%s: the message's end left updated_at at %d (set %d, start %d), %v", id, at, future, start, err)
	}
	return nil
}
