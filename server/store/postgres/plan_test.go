package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/store/storetest"
	"github.com/agentsync/agentsync/synccore"
)

// TestHeaderReadProbesParts checks that a commit's header read finds the
// parts it asks for by the (sid, msg_sequence, part_id) key, on a message
// of 300 parts in a database without statistics (as a new one is): a
// plan that scans the message's parts and filters makes every checkpoint
// of a long message cost its length. Both forms are checked, one part id
// and several, and their answers: the sequence of each id, NULL for one
// the message does not hold.
func TestHeaderReadProbesParts(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	storetest.NewSession(t, s, "plan")
	m := storetest.AgentMessage("plan", 1, storetest.TextPart(1, "streaming", "a"))
	storetest.MustCommit(t, s, "plan", m)
	for i := int64(2); i <= 300; i++ {
		m.Revision++
		m.Parts = []synccore.Part{storetest.TextPart(i, "streaming", "b")}
		storetest.MustCommit(t, s, "plan", m)
	}
	for _, c := range []struct {
		sql  string
		arg  any
		want []int64 // -1: NULL
	}{
		{headerOnePartSQL, "text:300", []int64{300}},
		{headerOnePartSQL, "text:nope", []int64{-1}},
		{headerSQL, []string{"text:7", "text:nope", "text:300"}, []int64{7, -1, 300}},
	} {
		rows, err := s.pool.Query(ctx, `EXPLAIN `+c.sql, "plan", "msg-1", c.arg)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		if !strings.Contains(text, "part_id = ") || strings.Contains(text, "Filter: (part_id") {
			t.Errorf("%v: the parts are not probed by their key:\n%s", c.arg, text)
		}
		var seqs []*int64
		var skip [7]any
		if err := s.pool.QueryRow(ctx, c.sql, "plan", "msg-1", c.arg).Scan(&skip[0], &skip[1], &skip[2], &skip[3], &skip[4], &skip[5], &skip[6], &seqs); err != nil {
			t.Fatal(err)
		}
		if len(seqs) != len(c.want) {
			t.Fatalf("%v: %d sequences, want %d", c.arg, len(seqs), len(c.want))
		}
		for i, w := range c.want {
			if got := seqs[i]; (w < 0) != (got == nil) || (got != nil && *got != w) {
				t.Errorf("%v: sequence %d = %v, want %d", c.arg, i, got, w)
			}
		}
	}
}
