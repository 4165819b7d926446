package sqlite

import (
	"context"
	"strings"
	"testing"
)

// TestQueryPlans pins the hot queries to their indexes: a page read must
// be index range scans, never a table scan or a temporary sort.
func TestQueryPlans(t *testing.T) {
	s, _ := openTest(t)
	plans := map[string]string{
		pageVisibleSQL: "USING PRIMARY KEY",
		pageAllSQL:     "USING PRIMARY KEY",
		`SELECT msg_sequence, body FROM parts WHERE sid = ? AND msg_sequence BETWEEN ? AND ?
		ORDER BY msg_sequence, sequence`: "USING PRIMARY KEY",
		`SELECT s.session_id, m.message_id FROM messages AS m JOIN sessions AS s USING (sid)
			WHERE m.state = 'streaming' ORDER BY m.sid, m.sequence`: "messages_streaming",
	}
	err := s.read(context.Background(), func(c *conn) error {
		for query, want := range plans {
			st, _, err := c.db.Prepare(`EXPLAIN QUERY PLAN ` + query)
			if err != nil {
				return err
			}
			var plan []string
			for st.Step() {
				plan = append(plan, st.ColumnText(3))
			}
			st.Close()
			joined := strings.Join(plan, " | ")
			if !strings.Contains(joined, want) || strings.Contains(joined, "TEMP B-TREE") {
				t.Errorf("plan of %q:\n  %s\nwant %q and no temp b-tree", query, joined, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
