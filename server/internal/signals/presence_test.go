package signals

import (
	"encoding/json"
	"testing"
	"time"
)

// next is the next signal on s within d, or nil.
func next(t *testing.T, s *Sub, d time.Duration) *Presence {
	t.Helper()
	select {
	case data := <-s.C:
		var p Presence
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("signal %q: %v", data, err)
		}
		return &p
	case <-time.After(d):
		return nil
	}
}

// A subscriber that joins gets the presence even when its joining left
// it unchanged (one principal's connection replaced by another within a
// coalescing interval), and only it: the others already have it.
func TestPresenceJoinTellsOnlyTheNewSubscriber(t *testing.T) {
	t.Parallel()
	h, err := New(nil, nil, "n1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	watcher := h.Subscribe("s", "s", "bob")
	first := h.Subscribe("s", "s", "alice")
	if p := next(t, watcher, 5*time.Second); p == nil || len(p.Viewers) != 2 {
		t.Fatalf("watcher: %+v, want alice and bob", p)
	}
	if p := next(t, first, 5*time.Second); p == nil || len(p.Viewers) != 2 {
		t.Fatalf("first: %+v, want alice and bob", p)
	}
	// alice's tab reloads: a new connection, then the old one goes, in
	// one interval. What the hub tells is the same as before.
	second := h.Subscribe("s", "s", "alice")
	first.Close()
	p := next(t, second, 5*time.Second)
	if p == nil || len(p.Viewers) != 2 || p.Viewers[0].Principal != "alice" || p.Viewers[0].Connections != 1 {
		t.Fatalf("the new subscriber: %+v, want alice (1 connection) and bob", p)
	}
	if p := next(t, watcher, 4*presenceInterval); p != nil {
		t.Fatalf("the watcher was told an unchanged presence again: %+v", p)
	}
}
