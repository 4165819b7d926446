package main

import (
	"bytes"
	"strings"
	"testing"
)

// Every ratio the table prints divides figures that count the same thing:
// a row whose baseline reports another unit is a mistake in rows.go.
func TestRowsDivideOnlyLikeUnits(t *testing.T) {
	for _, r := range rows {
		if r.Baseline != "" && dimension(r.Metric) != dimension(r.BaselineMetric()) {
			t.Errorf("%s %s is compared with %s %s: different units", r.Bench, r.Metric, r.Baseline, r.BaselineMetric())
		}
		if r.Target.Ratio && r.Baseline == "" {
			t.Errorf("%s: a ratio target without a baseline can never be checked", r.Bench)
		}
	}
}

func TestParseGoBenchTakesTheMedianAndCountsRuns(t *testing.T) {
	out := `goos: linux
BenchmarkX/a-2   	 1000	 300 ns/op	 2 allocs/op
BenchmarkX/a-2   	 1000	 100 ns/op	 2 allocs/op
BenchmarkX/a-2   	 1000	 200 ns/op	 4 allocs/op
BenchmarkY-2     	 10	 5 ns/op
PASS
`
	res := parseGoBench(strings.NewReader(out), "pkg")
	if len(res) != 2 {
		t.Fatalf("got %d results, want 2: %+v", len(res), res)
	}
	if r := res[0]; r.Name != "pkg.X/a" || r.Runs != 3 || r.Metrics["ns/op"] != 200 || r.Metrics["allocs/op"] != 2 {
		t.Errorf("X/a: %+v, want median 200 ns/op and 2 allocs/op over 3 runs", r)
	}
	if r := res[1]; r.Name != "pkg.Y" || r.Runs != 1 || r.Metrics["ns/op"] != 5 {
		t.Errorf("Y: %+v", r)
	}
}

func TestVerdict(t *testing.T) {
	cases := []struct {
		t         target
		v, ratio  float64
		haveRatio bool
		want      string
	}{
		{atMost(250, ""), 250, 0, false, "ok"},
		{atMost(250, ""), 251, 0, false, "MISSED"},
		{atLeast(10000, ""), 9787, 0, false, "MISSED"},
		{atLeast(10000, ""), 10000, 0, false, "ok"},
		{ratioAtMost(1.3, ""), 999, 1.31, true, "MISSED"},
		{ratioAtMost(1.3, ""), 999, 0.9, true, "ok"},
		{ratioAtMost(1.3, ""), 999, 0, false, ""}, // baseline missing: nothing to judge
		{note("(reported)"), 1, 0, false, ""},
	}
	for i, c := range cases {
		if got := c.t.verdict(c.v, c.ratio, c.haveRatio); got != c.want {
			t.Errorf("case %d: %+v on %v (ratio %v): %q, want %q", i, c.t, c.v, c.ratio, got, c.want)
		}
	}
}

// The table marks a missed target, counts it, and names a row whose
// benchmark never reported.
func TestPrintTableMarksMissesAndUnreported(t *testing.T) {
	saved := rows
	defer func() { rows = saved }()
	rows = []row{
		{"p.Fast", "ns/op", "p.Base", "", atMost(100, "<=100 ns")},
		{"p.Slow", "ns/op", "p.Base", "", ratioAtMost(1.3, "<=1.3x")},
		{"p.Gone", "ns/op", "", "", atMost(1, "<=1 ns")},
		{"p.Fast", "brotli-bytes", "", "", note("(reported)")}, // an optional metric: shown as absent
		{"p.Fast", "allocs/op", "", "", atMost(1, "<=1")},      // a checked one: not run
	}
	all := []result{
		{Name: "p.Fast", Metrics: map[string]float64{"ns/op": 90}, Runs: 3},
		{Name: "p.Slow", Metrics: map[string]float64{"ns/op": 200}, Runs: 3},
		{Name: "p.Base", Metrics: map[string]float64{"ns/op": 100}, Runs: 3},
	}
	var buf bytes.Buffer
	sum := printTable(&buf, all)
	if sum.checked != 2 || sum.missed != 1 || len(sum.notRun) != 2 || sum.notRun[0] != "p.Gone" || sum.notRun[1] != "p.Fast allocs/op" {
		t.Errorf("summary %+v, want 2 checked, 1 missed, p.Gone and p.Fast allocs/op not run", sum)
	}
	if !strings.Contains(buf.String(), "(no brotli-bytes)") {
		t.Errorf("an absent metric is not shown as absent:\n%s", buf.String())
	}
	lines := strings.Split(buf.String(), "\n")
	for _, l := range lines {
		if strings.Contains(l, "p.Slow") && !strings.Contains(l, "MISSED") || strings.Contains(l, "p.Fast") && strings.Contains(l, "ns/op") && !strings.Contains(l, "ok") {
			t.Errorf("line not marked: %q", l)
		}
	}
	if !strings.Contains(buf.String(), "2.00x") {
		t.Errorf("no 2.00x ratio for p.Slow:\n%s", buf.String())
	}
}

// -js keeps only the JS scripts' rows: a Go suite's row would show as
// never reported and fail the run.
func TestJSRowsKeepOnlyTheScriptsRows(t *testing.T) {
	got := jsRows([]row{
		{Bench: "synccore.ApplyDelta/Handle/1KB"},
		{Bench: "js.chromium_host_100000"},
		{Bench: "follow.wasm/1MB"},
		{Bench: "js.task_host_10000"},
	})
	if len(got) != 2 || got[0].Bench != "js.chromium_host_100000" || got[1].Bench != "js.task_host_10000" {
		t.Errorf("jsRows: %+v, want the two js.* rows in order", got)
	}
	for _, r := range jsRows(rows) {
		if !strings.HasPrefix(r.Bench, "js.") {
			t.Errorf("jsRows kept %s", r.Bench)
		}
	}
	if len(jsRows(rows)) == 0 {
		t.Error("no js.* row in rows")
	}
}

func TestDimensionOfMilliseconds(t *testing.T) {
	if dimension("fetch_ms") != dimension("total_ms") || dimension("fetch_ms") == dimension("ns/op") {
		t.Errorf("fetch_ms and total_ms must be one dimension, ns/op another")
	}
}
