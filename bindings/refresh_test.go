package bindings

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// countingCore is a real core that counts how the Client uses it: frames
// events, takes of the changes (Changes, HandleChanges) and whole reads
// (View, Message). Each frames event is slowed down, as a busy host is, so
// frames queue up behind it and refreshes cover several events.
type countingCore struct {
	core.Core
	slow time.Duration

	mu                   sync.Mutex
	frames, takes, reads int
}

func (c *countingCore) count(frames, takes, reads int) {
	c.mu.Lock()
	c.frames, c.takes, c.reads = c.frames+frames, c.takes+takes, c.reads+reads
	c.mu.Unlock()
}

func (c *countingCore) Handle(ev synccore.Event) ([]synccore.Command, error) {
	if ev.Type == synccore.EvFrames {
		c.count(1, 0, 0)
		time.Sleep(c.slow)
	}
	return c.Core.Handle(ev)
}

func (c *countingCore) HandleChanges(ev synccore.Event) ([]synccore.Command, *synccore.Changes, error) {
	c.count(1, 1, 0)
	time.Sleep(c.slow)
	return c.Core.HandleChanges(ev)
}

func (c *countingCore) Changes() (synccore.Changes, error) {
	c.count(0, 1, 0)
	return c.Core.Changes()
}

func (c *countingCore) View() (synccore.View, error) {
	c.count(0, 0, 1)
	return c.Core.View()
}

func (c *countingCore) Message(id string) (synccore.Message, bool, error) {
	c.count(0, 0, 1)
	return c.Core.Message(id)
}

// TestRefreshTakesEachMessageOnce follows a long answer with a host slower
// than the stream: the Client takes the core's changes once per refresh
// (never once per frames event of a burst), never reads a message or the
// view whole, and every Update names each changed message once.
func TestRefreshTakesEachMessageOnce(t *testing.T) {
	srv := startServer(t, model.Paced(20*time.Microsecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := (&API{BaseURL: srv.URL}).CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := core.NewWasmCore(ctx, testRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	core := &countingCore{Core: wasm, slow: 300 * time.Microsecond}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Core: core})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	updates, twice := 0, ""
	stop := c.Watch(func(u Update) {
		mu.Lock()
		defer mu.Unlock()
		updates++
		seen := map[string]bool{}
		for _, mc := range u.Changes.Messages {
			if seen[mc.MessageID] && twice == "" {
				twice = mc.MessageID
			}
			seen[mc.MessageID] = true
		}
	})
	defer stop()

	sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:long chars=24000 delta=8"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(v View) bool {
		last, ok := v.Messages.Last()
		return ok && last.Sequence > sent.Sequence && last.Done() && textLen(last) >= 24000
	}); err != nil {
		t.Fatal(err)
	}
	core.mu.Lock()
	frames, takes, reads := core.frames, core.takes, core.reads
	core.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d frames events, %d takes, %d whole reads, %d updates", frames, takes, reads, updates)
	if twice != "" {
		t.Fatalf("an update named message %s twice: it was taken more than once in one refresh", twice)
	}
	if reads != 0 {
		t.Fatalf("%d whole reads of a message or the view while following an answer", reads)
	}
	if takes >= frames {
		t.Fatalf("%d takes for %d frames events: bursts were not taken once per refresh", takes, frames)
	}
}
