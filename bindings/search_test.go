package bindings

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// TestSearchAndOpenAround: through the Go host against a real server,
// Search finds a message and MessagesAround opens its session there, the
// hit in the page; MessagesAfter and Messages read on from the window's
// cursors exactly; a bad query is a typed bad_request.
func TestSearchAndOpenAround(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := startServer(t, model.Speed{})
	a := &API{BaseURL: srv.URL}
	s, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"alpha", "bravo", "the narwhal question", "delta", "echo"}
	for _, text := range texts {
		if _, err := a.Send(ctx, s.SessionID, synccore.Part{Type: synccore.PartText, Text: text}); err != nil {
			t.Fatal(err)
		}
		// The scripted reply runs; wait for it before the next post.
		for {
			p, err := a.Messages(ctx, s.SessionID, 200, 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if last := p.Items[len(p.Items)-1]; last.Role == synccore.RoleAgent && last.Done() {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatal("the reply never finished")
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	res, err := a.Search(ctx, "Narwhal", SearchOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.NextCursor == "" { // the user message and the reply quoting it
		t.Fatalf("search: %+v", res)
	}
	more, err := a.Search(ctx, "Narwhal", SearchOptions{Limit: 1, Cursor: res.NextCursor})
	if err != nil || len(more.Items) != 1 || more.NextCursor != "" {
		t.Fatalf("second page: %+v, %v", more, err)
	}
	hit := more.Items[0] // older: the user's message
	if hit.Role != "user" || hit.SessionID != s.SessionID || SnippetText(hit.Snippet) != "the narwhal question" || hit.Snippet != "the <mark>narwhal</mark> question" {
		t.Fatalf("hit %+v", hit)
	}
	w, err := a.MessagesAround(ctx, hit.SessionID, hit.Sequence, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Items) != 3 || w.Items[1].MessageID != hit.MessageID || !w.HasMore || !w.HasNewer {
		t.Fatalf("around %d: %+v", hit.Sequence, w)
	}
	all, err := a.Messages(ctx, s.SessionID, 200, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	older, err := a.Messages(ctx, s.SessionID, 200, w.NextBeforeSequence, false)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := a.MessagesAfter(ctx, s.SessionID, w.NextAfterSequence, 200, false)
	if err != nil {
		t.Fatal(err)
	}
	joined := slices.Concat(older.Items, w.Items, newer.Items)
	if len(joined) != len(all.Items) || newer.HasNewer || !newer.HasMore {
		t.Fatalf("older %d + window %d + newer %d, want %d", len(older.Items), len(w.Items), len(newer.Items), len(all.Items))
	}
	for i := range joined {
		if joined[i].MessageID != all.Items[i].MessageID {
			t.Fatalf("message %d: %s, want %s", i, joined[i].MessageID, all.Items[i].MessageID)
		}
	}
	_, err = a.Search(ctx, "  ", SearchOptions{})
	wantCode(t, err, synccore.CodeBadRequest)
	_, err = a.MessagesAround(ctx, s.SessionID, 0, 3, false)
	wantCode(t, err, synccore.CodeBadRequest)
}
