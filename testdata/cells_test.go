package testdata

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// cells_test.go holds docs/protocol.md to its traces: every cell of the
// states × events table of §6.1 names at least one trace, and each trace
// it names really feeds that event to a client in that status; every other
// trace number the doc cites exists.

var traceRef = regexp.MustCompile(`(?:^|[\s(])\[(\d+(?:\s*[,–-]\s*\d+)*)\]`)

// refs returns the trace numbers of every [..] in s ("3, 4", "44–46").
func refs(t *testing.T, s string) []int {
	var out []int
	for _, m := range traceRef.FindAllStringSubmatch(s, -1) {
		for _, part := range strings.Split(m[1], ",") {
			lo, hi, isRange := strings.Cut(strings.ReplaceAll(strings.TrimSpace(part), "–", "-"), "-")
			a, err := strconv.Atoi(strings.TrimSpace(lo))
			if err != nil {
				t.Fatalf("trace reference %q: %v", m[0], err)
			}
			b := a
			if isRange {
				if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
					t.Fatalf("trace reference %q: %v", m[0], err)
				}
			}
			for n := a; n <= b; n++ {
				out = append(out, n)
			}
		}
	}
	return out
}

// exercised returns, for each trace (numbered from 1), the cells
// "status|event" its steps hit, by running it through the native client.
func exercised(t *testing.T, traces []Trace) []map[string]bool {
	out := make([]map[string]bool, len(traces))
	for i, tr := range traces {
		out[i] = map[string]bool{}
		c := synccore.NewClient(synccore.Options{})
		for _, s := range tr.Steps {
			if ev, err := wire.DecodeEvent(s.Event); err == nil {
				out[i][c.View().Status+"|"+ev.Type] = true
			}
			wire.HandleBytes(c, s.Event)
		}
	}
	return out
}

func TestTableCellsHaveTraces(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	traces, err := Traces()
	if err != nil {
		t.Fatal(err)
	}
	hits := exercised(t, traces)
	var events []string
	rows := 0
	for line := range strings.SplitSeq(string(doc), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if strings.HasPrefix(line, `| status \ event |`) {
			events = cells[1:]
			continue
		}
		if events == nil || !strings.HasPrefix(line, "| ") {
			if events != nil && rows > 0 {
				break // the end of the table
			}
			continue
		}
		status := cells[0]
		if len(cells) != len(events)+1 {
			t.Fatalf("row %s: %d cells, want %d", status, len(cells)-1, len(events))
		}
		rows++
		for i, ev := range events {
			named := refs(t, cells[i+1])
			if len(named) == 0 {
				t.Errorf("cell %s × %s names no trace", status, ev)
			}
			for _, n := range named {
				if n < 1 || n > len(traces) {
					t.Errorf("cell %s × %s: no trace %d", status, ev, n)
				} else if !hits[n-1][status+"|"+ev] {
					t.Errorf("cell %s × %s: trace %d (%s) never feeds %s to a %s client", status, ev, n, traces[n-1].Name, ev, status)
				}
			}
		}
	}
	if rows != 6 || len(events) != 10 {
		t.Fatalf("read %d rows × %d events from §6.1, want 6 × 10", rows, len(events))
	}
	for _, n := range refs(t, string(doc)) {
		if n < 1 || n > len(traces) {
			t.Errorf("docs/protocol.md cites trace %d; there are %d", n, len(traces))
		}
	}
}
