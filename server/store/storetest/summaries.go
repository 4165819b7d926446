package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

func testSummariesAndRange(t *testing.T, open Opener) {
	s := open(t, "main")
	ctx := context.Background()
	NewSession(t, s, "s1")
	for i := int64(1); i <= 10; i++ {
		MustCommit(t, s, "s1", UserMessage("s1", i, "m"))
	}
	if _, ok, err := s.LatestSummary(ctx, "s1"); ok || err != nil {
		t.Fatalf("a new session has a summary (%v)", err)
	}
	WantCode(t, s.PutSummary(ctx, "s1", store.Summary{FromSequence: 1, ToSequence: 11, Text: "x"}), synccore.CodeBadRequest)
	WantCode(t, s.PutSummary(ctx, "s1", store.Summary{FromSequence: 0, ToSequence: 3, Text: "x"}), synccore.CodeBadRequest)
	WantCode(t, s.PutSummary(ctx, "nope", store.Summary{FromSequence: 1, ToSequence: 1}), synccore.CodeNotFound)
	a := store.Summary{FromSequence: 1, ToSequence: 4, Text: "first", Model: "scripted", CreatedAt: 5}
	b := store.Summary{FromSequence: 1, ToSequence: 7, Text: "second", Model: "openai:x", CreatedAt: 6}
	for _, sum := range []store.Summary{b, a} {
		if err := s.PutSummary(ctx, "s1", sum); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.LatestSummary(ctx, "s1")
	if err != nil || !ok || !reflect.DeepEqual(got, b) {
		t.Fatalf("latest %+v, want %+v (%v)", got, b, err)
	}
	// Summaries are not messages: pages are unchanged.
	if p := page(t, s, "s1", store.PageQuery{Limit: 50, IncludeInternal: true}); p.Total != 10 || len(p.Items) != 10 {
		t.Fatalf("page after summaries: total %d, %d items", p.Total, len(p.Items))
	}
	r, err := s.Range(ctx, "s1", 8, 20)
	if err != nil || !reflect.DeepEqual(sequences(r), []int64{8, 9, 10}) || len(r[0].Parts) != 1 {
		t.Fatalf("range: %v %v", sequences(r), err)
	}
	if r, err := s.Range(ctx, "s1", 5, 4); err != nil || len(r) != 0 {
		t.Fatalf("empty range: %v %v", r, err)
	}
	// Kept across a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, "main")
	if got, _, _ := s2.LatestSummary(ctx, "s1"); !reflect.DeepEqual(got, b) {
		t.Fatalf("after reopen %+v", got)
	}
}
