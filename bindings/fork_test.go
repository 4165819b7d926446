package bindings

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

func viewIDs(v View) []string {
	var out []string
	for _, m := range v.Messages.All() {
		out = append(out, m.MessageID)
	}
	return out
}

// converge waits until c's view digest equals the server's for its
// session, the client live and nothing streaming.
func converge(ctx context.Context, t *testing.T, srv *testServer, c *Client) {
	t.Helper()
	for {
		want, err := srv.srv.Digest(ctx, c.SessionID())
		if err != nil {
			t.Fatalf("server digest of %s: %v", c.SessionID(), err)
		}
		got, err := c.Digest(ctx)
		if err != nil {
			t.Fatalf("client digest: %v", err)
		}
		last, ok := c.View().Messages.Last()
		if got == want && c.Status() == synccore.StatusLive && (!ok || last.Done()) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never converged: client %s, server %s (status %s)", c.SessionID(), got, want, c.Status())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestForkEditRegenerateSwitch: through the Go host (wasm core) against a
// real server: an edit and a regeneration keep the original, Branches
// lists them, SwitchBranch moves the client to another path (one page and
// a subscription) mid-stream and back, and a fork made while its parent
// keeps streaming sees none of the parent's new messages. The core runs
// unchanged: a fork is an ordinary session to it.
func TestForkEditRegenerateSwitch(t *testing.T) {
	srv := startServer(t, model.Speed{Delta: 200 * time.Microsecond})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	sess, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Runtime: testRuntime(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	runTurn(ctx, t, c, "hello", nil)
	runTurn(ctx, t, c, "scenario:text chars=300", nil)
	converge(ctx, t, srv, c)
	orig := viewIDs(c.View())
	if len(orig) != 4 {
		t.Fatalf("root holds %v, want 4 messages", orig)
	}

	edit, err := c.Edit(ctx, 3, synccore.Part{Type: synccore.PartText, Text: "hello again"})
	if err != nil {
		t.Fatal(err)
	}
	regen, err := c.Regenerate(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	if edit.ParentSessionID != sess.SessionID || edit.ForkSequence != 3 || regen.ForkSequence != 4 || regen.RootSessionID != sess.SessionID {
		t.Fatalf("forks: edit %+v, regenerate %+v", edit, regen)
	}
	if _, err := c.Fork(ctx, 1, ForkOptions{}); !errors.Is(err, synccore.ErrBadRequest) {
		t.Fatalf("a fork before 1: %v, want bad_request", err)
	}
	// The regenerated reply is written once its turn starts: until then
	// the fork has nothing at 4 to list.
	var b Branches
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err = c.Branches(ctx, 4)
		if err == nil && len(b.Items) == 2 && b.Index == 0 && b.Items[1].SessionID == regen.SessionID && b.Items[1].Message != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("branches at 4: %+v, %v", b, err)
		}
	}

	if alts, err := c.Alternatives(ctx); err != nil || len(alts) != 2 || alts[0].Sequence != 3 || alts[1].Count != 2 {
		t.Fatalf("alternatives of the root: %+v, %v", alts, err)
	}

	// Switch to the regeneration: its path shares the root's first three
	// messages, by id.
	c, err = c.SwitchBranch(ctx, regen.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	converge(ctx, t, srv, c)
	got := viewIDs(c.View())
	if len(got) != 4 || !slices.Equal(got[:3], orig[:3]) || got[3] == orig[3] {
		t.Fatalf("regeneration's path %v, root's %v", got, orig)
	}

	// A long answer on the regeneration; mid-stream, a fork of its done
	// prefix (its parent keeps streaming) and a switch to the edit.
	if _, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:long chars=30000 delta=16"}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(v View) bool {
		last, ok := v.Messages.Last()
		return ok && last.Role == synccore.RoleAgent && !last.Done() && len(last.Parts) > 0 && len(last.Parts[0].Text) > 100
	}); err != nil {
		t.Fatalf("waiting for the stream: %v", err)
	}
	here, err := c.Fork(ctx, 6, ForkOptions{}) // messages 1..5 are done; 6 streams
	if err != nil {
		t.Fatalf("fork while the parent streams: %v", err)
	}
	if _, err := c.Fork(ctx, 7, ForkOptions{}); err == nil {
		// 7 is head+1 only once 6 is committed; either way it is refused
		// while 6 streams (conflict) or lies past the head (bad_request).
		t.Fatal("a fork past a streaming message was accepted")
	}
	c, err = c.SwitchBranch(ctx, edit.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	converge(ctx, t, srv, c)
	if got := viewIDs(c.View()); len(got) != 4 || !slices.Equal(got[:2], orig[:2]) || got[2] == orig[2] {
		t.Fatalf("edit's path %v", got)
	}
	// Back to the regeneration, whose stream may still run: the client
	// joins it and ends with the server's path.
	c, err = c.SwitchBranch(ctx, regen.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	converge(ctx, t, srv, c)
	regenPath := viewIDs(c.View())
	if len(regenPath) != 6 {
		t.Fatalf("regeneration's path after the long answer: %v", regenPath)
	}
	// The fork made mid-stream holds the prefix only.
	c, err = c.SwitchBranch(ctx, here.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	converge(ctx, t, srv, c)
	if got := viewIDs(c.View()); !slices.Equal(got, regenPath[:5]) {
		t.Fatalf("fork made mid-stream reads %v, want %v", got, regenPath[:5])
	}
}

// TestOnAlternatives: a client with OnAlternatives hears of a fork made by
// another client of its session (and of its deletion) as a signal of its
// subscription, with its own path's count, while its view stays exact.
func TestOnAlternatives(t *testing.T) {
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	sess, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	heard := make(chan httpwire.BranchCount, 8)
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Runtime: testRuntime(t),
		OnAlternatives: func(b httpwire.BranchCount) { heard <- b }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	runTurn(ctx, t, c, "hello", nil)
	next := func() httpwire.BranchCount {
		t.Helper()
		select {
		case b := <-heard:
			return b
		case <-ctx.Done():
			t.Fatal("no alternatives signal")
			return httpwire.BranchCount{}
		}
	}
	regen, err := a.Regenerate(ctx, sess.SessionID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := next(); got != (httpwire.BranchCount{Sequence: 2, Count: 2, Index: 0}) {
		t.Fatalf("after another client's regeneration: %+v", got)
	}
	if err := a.DeleteSession(ctx, regen.SessionID); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != (httpwire.BranchCount{Sequence: 2, Count: 1, Index: 0}) {
		t.Fatalf("after the fork's deletion: %+v", got)
	}
	converge(ctx, t, srv, c)
}
