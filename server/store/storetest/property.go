package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// TestPropertyRandomCommitsAndWalks drives the store with random batches
// (new user and agent messages, internal ones, revisions of streaming
// messages, bad batches that must change nothing) against an in-memory
// model, and after every batch walks the history with a random page size:
// every walk must see each expected message exactly once, in order, equal
// to the model.
func testPropertyRandomCommitsAndWalks(t *testing.T, open Opener) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { propertyRun(t, open, seed) })
	}
}

func propertyRun(t *testing.T, open Opener, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 42))
	s := open(t, "main")
	NewSession(t, s, "p")
	var model []synccore.Message // index = sequence-1
	accepted, rejected, updates := 0, 0, 0
	defer func() {
		if !t.Failed() && (accepted == 0 || rejected == 0 || updates == 0) {
			t.Errorf("weak run: %d accepted, %d rejected batches, %d revisions", accepted, rejected, updates)
		}
	}()

	for step := range 60 {
		batch, ok := randomBatch(rng, model)
		err := s.Commit(ctx, "p", batch)
		if ok != (err == nil) {
			t.Fatalf("step %d: commit ok=%v but err=%v", step, ok, err)
		}
		if !ok {
			var se *synccore.Error
			if !errors.As(err, &se) {
				t.Fatalf("step %d: untyped error %v", step, err)
			}
			rejected++
		} else {
			accepted++
		}
		if ok {
			for _, m := range batch {
				if m.Sequence <= int64(len(model)) {
					updates++
					old := model[m.Sequence-1]
					m.Parts = mergeParts(old.Parts, m.Parts)
					model[m.Sequence-1] = m
				} else {
					model = append(model, m)
				}
			}
		}
		internal := rng.IntN(2) == 0
		limit := 1 + rng.IntN(25)
		got := walkMessages(t, s, "p", limit, internal)
		var want []synccore.Message
		for _, m := range model {
			if internal || m.Visibility == synccore.VisibilityVisible {
				want = append(want, m)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("step %d limit %d internal %v: walked %v, want %v", step, limit, internal, sequences(got), sequences(want))
		}
		for i := range want {
			if !reflect.DeepEqual(normalise(got[i]), normalise(want[i])) {
				t.Fatalf("step %d: message %d differs:\n got %+v\nwant %+v", step, want[i].Sequence, got[i], want[i])
			}
		}
	}
}

func walkMessages(t *testing.T, s store.Store, id string, limit int, internal bool) []synccore.Message {
	q := store.PageQuery{Limit: limit, IncludeInternal: internal}
	var out []synccore.Message
	for {
		p := page(t, s, id, q)
		out = append(slices.Clone(p.Items), out...)
		if !p.HasMore {
			return out
		}
		q.BeforeSequence = p.NextBeforeSequence
	}
}

// randomBatch returns a batch and whether the store must accept it.
func randomBatch(rng *rand.Rand, model []synccore.Message) ([]synccore.Message, bool) {
	head := int64(len(model))
	var batch []synccore.Message
	pending := map[int64]synccore.Message{} // revisions made in this batch
	for range 1 + rng.IntN(4) {
		var streaming []synccore.Message
		for _, m := range model {
			if m.Role == synccore.RoleAgent && m.State == synccore.MessageStreaming {
				if p, ok := pending[m.Sequence]; ok {
					m = p
				}
				if m.State == synccore.MessageStreaming {
					streaming = append(streaming, m)
				}
			}
		}
		if len(streaming) > 0 && rng.IntN(2) == 0 {
			m := streaming[rng.IntN(len(streaming))]
			m.Revision++
			if rng.IntN(3) == 0 {
				m.State = synccore.MessageDone
			}
			n := int64(len(m.Parts))
			m.Parts = nil
			if n > 0 { // rewrite one existing part
				k := 1 + rng.Int64N(n)
				m.Parts = append(m.Parts, TextPart(k, "streaming", fmt.Sprint("rev", m.Revision)))
			}
			m.Parts = append(m.Parts, TextPart(n+1, "streaming", "new")) // and add one
			pending[m.Sequence] = mergedFor(model, pending, m)
			batch = append(batch, m)
			continue
		}
		head++
		var m synccore.Message
		if rng.IntN(2) == 0 {
			m = UserMessage("p", head, fmt.Sprint("u", head))
		} else {
			m = AgentMessage("p", head, TextPart(1, "streaming", "a"))
		}
		if rng.IntN(4) == 0 {
			m.Visibility = synccore.VisibilityInternal
		}
		batch = append(batch, m)
		pending[m.Sequence] = m
	}
	// Sometimes spoil the batch at a random place: the store must then
	// reject all of it.
	if rng.IntN(5) == 0 {
		i := rng.IntN(len(batch))
		bad := batch[i]
		switch rng.IntN(3) {
		case 0:
			bad.Revision += 5
		case 1:
			bad.Sequence += 3
		default:
			bad.Parts = append(bad.Parts, synccore.Part{PartID: "bad", Sequence: 99, Type: synccore.PartText})
		}
		batch[i] = bad
		return batch, false
	}
	return batch, true
}

// mergedFor is m with its parts merged over the latest known version.
func mergedFor(model []synccore.Message, pending map[int64]synccore.Message, m synccore.Message) synccore.Message {
	base := model[m.Sequence-1]
	if p, ok := pending[m.Sequence]; ok {
		base = p
	}
	out := m
	out.Parts = mergeParts(base.Parts, m.Parts)
	return out
}

// mergeParts upserts given into old by part_id, ordered by sequence.
func mergeParts(old, given []synccore.Part) []synccore.Part {
	out := slices.Clone(old)
	for _, p := range given {
		i := slices.IndexFunc(out, func(q synccore.Part) bool { return q.PartID == p.PartID })
		if i >= 0 {
			out[i] = p
		} else {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b synccore.Part) int { return int(a.Sequence - b.Sequence) })
	return out
}

func normalise(m synccore.Message) synccore.Message {
	if m.Parts == nil {
		m.Parts = []synccore.Part{}
	}
	return m
}
