package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/model"

	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// BenchmarkComposeWindow is the composer's read for one model step in a
// session of n messages (alternating user and done agent messages, ~60
// tokens each) whose older turns a summary stands for: the latest
// summary, then the messages after it. It must stay flat as n grows
// (the figure of n=100000 within 1.5x of n=100).
func BenchmarkComposeWindow(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			e := newEnv(b, Config{})
			sid := e.session("")
			fill(b, e, sid, n)
			// The summary covers all but the newest 20 messages.
			if err := e.st.PutSummary(e.ctx, sid, store.Summary{FromSequence: 1, ToSequence: int64(n - 20), Text: "earlier: " + strings.Repeat("x", 400), Model: "scripted"}); err != nil {
				b.Fatal(err)
			}
			s, err := e.m.session(e.ctx, sid)
			if err != nil {
				b.Fatal(err)
			}
			defer e.m.release(s)
			p := scripted.Scripted{Budget: 4000}
			t := &turn{id: "bench", ctx: e.ctx}
			b.ResetTimer()
			for b.Loop() {
				w, err := s.composeWindow(e.ctx, t, p, model.DefaultName)
				if err != nil || len(w.input) != 21 {
					b.Fatalf("window of %d entries, err %v", len(w.input), err)
				}
			}
		})
	}
}

// fill commits n messages straight to the store, in batches.
func fill(b *testing.B, e *env, sid string, n int) {
	const batch = 1000
	text := strings.Repeat("lorem ipsum ", 20)
	for start := 1; start <= n; start += batch {
		var msgs []synccore.Message
		for seq := start; seq < start+batch && seq <= n; seq++ {
			role, state := synccore.RoleUser, synccore.MessageState("")
			if seq%2 == 0 {
				role, state = synccore.RoleAgent, synccore.MessageDone
			}
			msgs = append(msgs, synccore.Message{
				MessageID: fmt.Sprintf("msg-%d", seq), Sequence: int64(seq), Revision: 1, Role: role, State: state,
				TurnID: fmt.Sprintf("turn-%d", (seq+1)/2), Visibility: synccore.VisibilityVisible,
				Parts: []synccore.Part{{PartID: partID(role, synccore.PartText, 1), Sequence: 1, Type: synccore.PartText, Text: text, State: textState(role)}},
			})
		}
		if err := e.st.Commit(e.ctx, sid, msgs); err != nil {
			b.Fatal(err)
		}
	}
	s, err := e.m.session(e.ctx, sid)
	if err != nil {
		b.Fatal(err)
	}
	defer e.m.release(s)
	s.mu.Lock()
	s.rec.HeadSequence = int64(n)
	s.mu.Unlock()
}

func textState(r synccore.Role) synccore.PartState {
	if r == synccore.RoleAgent {
		return synccore.StateDone
	}
	return ""
}
