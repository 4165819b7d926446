package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// TestEvictionUnderLoad races eviction against every use of a session: a
// cap of 2 loaded sessions and a 2 ms idle timeout, while 8 goroutines
// post, subscribe, change settings and read on 6 sessions at random. No
// call fails, and each session ends with a gapless history, nothing
// streaming, and a subscriber hello at the store's head: no use ever ran
// on a copy of a session that another copy had moved past.
func TestEvictionUnderLoad(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 2 * time.Millisecond, MaxLoaded: 2})
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = e.session("")
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	ctx := context.Background()
	for w := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 40 {
				sid := ids[rng.IntN(len(ids))]
				var err error
				switch rng.IntN(4) {
				case 0:
					_, err = e.m.PostMessage(ctx, sid, PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: fmt.Sprintf("w%d i%d", w, i)}}})
				case 1:
					sub, serr := e.m.Subscribe(ctx, sid)
					if err = serr; err == nil {
						frames, nerr := sub.Next(ctx)
						if nerr != nil || len(frames) == 0 || frames[0].Kind != synccore.FrameHello {
							err = fmt.Errorf("subscription of %s began with %+v, %v", sid, frames, nerr)
						}
						sub.Close()
					}
				case 2:
					mode := ApprovalAuto
					if rng.IntN(2) == 0 {
						mode = ApprovalAsk
					}
					_, err = e.m.Action(ctx, sid, Action{ActionType: ActionSetApprovalMode, Value: mode})
				case 3:
					_, err = e.m.Messages(ctx, sid, storeQuery(50, false))
				}
				if err != nil {
					fail(fmt.Errorf("worker %d op %d on %s: %w", w, i, sid, err))
				}
				time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d calls failed, first: %v", len(errs), errs[0])
	}
	e.waitIdle() // plain text asks no approval, in either mode
	t.Logf("%d evictions", e.m.Evicted())
	if e.m.Evicted() == 0 {
		t.Fatal("nothing was ever evicted: the test raced nothing")
	}
	for _, sid := range ids {
		hist := e.history(sid)
		for i, m := range hist {
			if m.Sequence != int64(i+1) {
				t.Fatalf("%s: message %d has sequence %d", sid, i, m.Sequence)
			}
			if m.State == synccore.MessageStreaming {
				t.Fatalf("%s: message %d still streaming", sid, m.Sequence)
			}
		}
		sub, err := e.m.Subscribe(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		frames, err := sub.Next(ctx)
		sub.Close()
		if err != nil || frames[0].HeadSequence != int64(len(hist)) {
			t.Fatalf("%s: hello %+v, %v; the store's head is %d", sid, frames[0], err, len(hist))
		}
	}
}
