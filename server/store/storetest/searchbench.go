package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// The search fixture: SearchFixtureMessages messages over 100 sessions,
// 90 of principal "bench" and 10 of "other", user and agent messages
// alternating, each of 12 to 60 words drawn from a 5,000-word vocabulary
// with Zipf frequencies (a few words in most messages, most words rare).
const (
	SearchFixtureMessages = 100_000
	searchFixtureSessions = 100
	searchVocabulary      = 5000
)

func fixtureWord(i uint64) string { return fmt.Sprintf("w%dx", i) }

// BuildSearchFixture commits the search fixture into s through Commit,
// 250 messages a batch, so the index is the one commits keep.
func BuildSearchFixture(tb testing.TB, s store.Store) {
	tb.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.07, 2, searchVocabulary-1)
	per := int64(SearchFixtureMessages / searchFixtureSessions)
	start := time.Now()
	for n := range searchFixtureSessions {
		id := fmt.Sprintf("search-%d", n)
		owner := "bench"
		if n%10 == 9 {
			owner = "other"
		}
		if err := s.CreateSession(ctx, store.Session{SessionID: id, Model: "scripted", ApprovalMode: "ask", Owner: owner}); err != nil {
			tb.Fatal(err)
		}
		batch := make([]synccore.Message, 0, 250)
		for seq := int64(1); seq <= per; seq++ {
			words := make([]string, 12+rng.IntN(49))
			for i := range words {
				words[i] = fixtureWord(zipf.Uint64())
			}
			text := strings.Join(words, " ")
			m := UserMessage(id, seq, text)
			if seq%2 == 0 {
				m = AgentMessage(id, seq, TextPart(1, "done", text))
				m.State = synccore.MessageDone
			}
			batch = append(batch, m)
			if len(batch) == cap(batch) || seq == per {
				if err := s.Commit(ctx, id, batch); err != nil {
					tb.Fatal(err)
				}
				batch = batch[:0]
			}
		}
	}
	tb.Logf("search fixture: %d messages committed in %v", SearchFixtureMessages, time.Since(start).Round(time.Millisecond))
}

// BenchSearch measures Search (20 hits a page, principal "bench") over the
// search fixture already in s, with a mix of queries: a common word, a
// rare word, two words, a prefix and a word no message has, and the page
// after the first. It reports p50 and p99 of the calls.
func BenchSearch(b *testing.B, s store.Store) {
	ctx := context.Background()
	queries := []string{
		fixtureWord(2),                         // in most messages
		fixtureWord(40),                        // a few percent
		fixtureWord(900),                       // rare
		fixtureWord(3) + " " + fixtureWord(60), // two words
		"w12",                                  // a prefix (w12x, w120x...)
		fixtureWord(searchVocabulary + 7),      // nowhere
	}
	// The cursor of each query's second page.
	cursors := make([]int64, len(queries))
	for i, q := range queries {
		p, err := s.Search(ctx, store.SearchQuery{Owner: "bench", Text: q, Limit: 20})
		if err != nil {
			b.Fatal(err)
		}
		cursors[i] = p.NextCursor
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		qi := i % len(queries)
		q := store.SearchQuery{Owner: "bench", Text: queries[qi], Limit: 20}
		if (i/len(queries))%2 == 1 {
			q.Cursor = cursors[qi]
		}
		t0 := time.Now()
		if _, err := s.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
