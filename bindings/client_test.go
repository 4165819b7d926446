package bindings

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// TestClientPagingAndHelpers: a client with a small page holds the newest
// page, loads older history until it holds everything (the server's
// digest), and the HTTP helpers answer typed errors.
func TestClientPagingAndHelpers(t *testing.T) {
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	sess, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// Eight finished turns: sixteen messages.
	for i := range 8 {
		m, err := a.Send(ctx, sess.SessionID, synccore.Part{Type: synccore.PartText, Text: "scenario:text chars=40"})
		if err != nil {
			t.Fatal(err)
		}
		if m.Sequence != int64(2*i+1) {
			t.Fatalf("turn %d: user message sequence %d", i, m.Sequence)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			page, err := a.Messages(ctx, sess.SessionID, 1, 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(page.Items); n == 1 && page.Items[0].Sequence == m.Sequence+1 && page.Items[0].State == synccore.MessageDone {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("turn %d never finished", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, PageLimit: 5, Core: core.NewNativeCore()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := c.View()
	if v.Messages.Len() != 5 || !v.HasMoreOlder || v.Total != 16 {
		t.Fatalf("first view: %d messages, has_more_older %v, total %d; want 5, true, 16", v.Messages.Len(), v.HasMoreOlder, v.Total)
	}
	var views atomic.Int64
	unsubscribe := c.Subscribe(func(View) { views.Add(1) })
	for loads := 0; c.View().HasMoreOlder; loads++ {
		if loads > 5 {
			t.Fatal("LoadOlder never reached the start of the history")
		}
		if err := c.LoadOlder(ctx); err != nil {
			t.Fatalf("load older: %v", err)
		}
	}
	unsubscribe()
	v = c.View()
	if v.Messages.Len() != 16 || v.Messages.At(0).Sequence != 1 {
		t.Fatalf("after loading older: %d messages from sequence %d", v.Messages.Len(), v.Messages.At(0).Sequence)
	}
	if views.Load() == 0 {
		t.Fatal("the subscriber saw no view while loading older")
	}
	want, err := srv.srv.Digest(ctx, sess.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Digest(ctx); err != nil || got != want {
		t.Fatalf("digest %s (%v), server %s", got, err, want)
	}

	// Direct reads and typed errors.
	page, err := c.Messages(ctx, 3, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 3 || page.Items[0].Sequence != 2 || !page.HasMore || page.NextBeforeSequence != 2 {
		t.Fatalf("page before 5: %+v", page)
	}
	_, err = c.Messages(ctx, -1, 0, false)
	wantCode(t, err, synccore.CodeBadRequest)
	_, err = c.Answer(ctx, "no-such-interaction", Approval(true))
	wantCode(t, err, synccore.CodeNotFound)
	_, err = a.Send(ctx, "no-such-session", synccore.Part{Type: synccore.PartText, Text: "hi"})
	wantCode(t, err, synccore.CodeNotFound)
	_, err = c.Send(ctx, synccore.Part{Type: "hologram", Text: "hi"})
	wantCode(t, err, synccore.CodeUnknownPartType)
	list, err := a.Sessions(ctx)
	if err != nil || len(list) != 1 || list[0].SessionID != sess.SessionID {
		t.Fatalf("sessions: %+v (%v)", list, err)
	}

	// Close is final and idempotent.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.Status() != synccore.StatusClosed {
		t.Fatalf("status after close: %s", c.Status())
	}
	if err := c.WaitFor(ctx, func(v View) bool { return false }); !errors.Is(err, errClosed) {
		t.Fatalf("WaitFor after close: %v", err)
	}
	if err := c.LoadOlder(ctx); !errors.Is(err, errClosed) {
		t.Fatalf("LoadOlder after close: %v", err)
	}
}

// TestDialGivesUpWithItsContext: a Dial whose context ends before its
// first attempt is answered returns the context's error.
func TestDialGivesUpWithItsContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // accepts (the kernel's backlog) and never answers
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Dial(ctx, Config{BaseURL: "http://" + ln.Addr().String(), SessionID: "s1", Core: core.NewNativeCore()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial: %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Dial took %v after its deadline", d)
	}
	_, err = New(ctx, Config{SessionID: "s1"})
	wantCode(t, err, synccore.CodeBadRequest)
}
