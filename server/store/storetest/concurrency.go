package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// TestReadersWhileWriterCommits runs readers against a writer that keeps
// growing one streaming message and appending new ones. Every page must be
// a consistent snapshot: the header's revision matches its parts' content,
// and an include_internal page up to the head ends exactly at total.
func testReadersWhileWriterCommits(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")
	MustCommit(t, s, "s", UserMessage("s", 1, "go"))

	const writes = 300
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	report := func(msg string) {
		select {
		case errs <- msg:
		default:
		}
	}
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				p, err := s.Messages(ctx, "s", store.PageQuery{Limit: 20 + r, IncludeInternal: true})
				if err != nil {
					report(err.Error())
					return
				}
				if p.EndSequence != p.Total {
					report("page end is not the head of its own snapshot")
				}
				for i, m := range p.Items {
					if i > 0 && m.Sequence != p.Items[i-1].Sequence+1 {
						report("gap in an include_internal page")
					}
					if m.Role == synccore.RoleAgent {
						if want := strings.Repeat("x", int(m.Revision)); m.Parts[0].Text != want {
							report("parts and revision come from different snapshots")
						}
					}
				}
				if n%10 == 0 {
					if _, err := s.History(ctx, "s"); err != nil {
						report(err.Error())
					}
				}
			}
		}()
	}

	// The writer: revision r of msg-2 holds r x's; every 10th write also
	// appends a user message in the same batch.
	a := AgentMessage("s", 2, TextPart(1, "streaming", "x"))
	MustCommit(t, s, "s", a)
	head := int64(2)
	for rev := int64(2); rev <= writes; rev++ {
		a.Revision = rev
		a.Parts = []synccore.Part{TextPart(1, "streaming", strings.Repeat("x", int(rev)))}
		batch := []synccore.Message{a}
		if rev%10 == 0 {
			head++
			batch = append(batch, UserMessage("s", head, "more"))
		}
		if err := s.Commit(ctx, "s", batch); err != nil {
			t.Fatalf("commit %d: %v", rev, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	m, err := s.Message(ctx, "s", "msg-2")
	if err != nil || m.Revision != writes || len(m.Parts[0].Text) != writes {
		t.Fatalf("final message rev=%d err=%v", m.Revision, err)
	}
}

// TestConcurrentWritersSerialise has several goroutines commit to their
// own sessions at once: every commit lands and is counted.
func testConcurrentWritersSerialise(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	ids := []string{"w0", "w1", "w2", "w3"}
	for _, id := range ids {
		NewSession(t, s, id)
	}
	before := s.CommitCount()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := int64(1); seq <= 50; seq++ {
				if err := s.Commit(ctx, id, []synccore.Message{UserMessage(id, seq, "x")}); err != nil {
					t.Errorf("%s/%d: %v", id, seq, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := s.CommitCount() - before; got != 200 {
		t.Fatalf("CommitCount grew by %d, want 200", got)
	}
	for _, id := range ids {
		if p := page(t, s, id, store.PageQuery{Limit: 200}); p.Total != 50 || len(p.Items) != 50 {
			t.Fatalf("%s: total %d", id, p.Total)
		}
	}
}

// testWritersRaceForTheNextSequence has writers on two stores over the
// same data (two server nodes) race to append to one session, each
// reading the head and committing head + 1: a loser gets a conflict and
// retries, and the session ends gapless with every winner's message once.
func testWritersRaceForTheNextSequence(t *testing.T, open Opener) {
	ctx := context.Background()
	nodes := []store.Store{open(t, "main")}
	NewSession(t, nodes[0], "s")
	nodes = append(nodes, open(t, "main"))
	const writers, each = 4, 15
	var wg sync.WaitGroup
	conflicts := make([]int, writers)
	for w := range writers {
		wg.Go(func() {
			s := nodes[w%len(nodes)]
			for n := 0; n < each; {
				sess, err := s.Session(ctx, "s")
				if err != nil {
					t.Error(err)
					return
				}
				runtime.Gosched() // let another writer take the same head
				m := UserMessage("s", sess.HeadSequence+1, "x")
				m.MessageID = fmt.Sprintf("w%d-%d", w, n)
				err = s.Commit(ctx, "s", []synccore.Message{m})
				switch {
				case err == nil:
					n++
				case errors.Is(err, &synccore.Error{Code: synccore.CodeConflict}):
					conflicts[w]++
				default:
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	hist, err := nodes[1].History(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for i, m := range hist {
		if m.Sequence != int64(i+1) || ids[m.MessageID] {
			t.Fatalf("message %d: sequence %d, id %s (seen before: %v)", i, m.Sequence, m.MessageID, ids[m.MessageID])
		}
		ids[m.MessageID] = true
	}
	if len(hist) != writers*each {
		t.Fatalf("%d messages, want %d", len(hist), writers*each)
	}
	t.Logf("conflicts per writer: %v", conflicts)
}
