// Command benchtable runs every benchmark of the repository (Go testing.B
// benchmarks and the JavaScript host's benchmark script) and prints one
// table: each figure beside the baseline measured in the same run, their
// ratio (only between figures of the same unit), and the target it is held
// to, marked MISSED when the figure misses it. These machines are noisy, so
// ratios against a same-run baseline are the figures to trust.
//
// Every figure is the median of the runs the "runs" column counts (Go
// -count, the JS script's timed batches); 1 means a single run, whose
// figure may itself be a percentile over its iterations (p50-µs, p99-µs).
// It exits 1 when a benchmark suite fails or a row's benchmark never
// reported, after printing what it has; a missed target is marked, not
// fatal (a noisy machine misses some), and counted on stderr.
//
//	go run ./tools/benchtable            # everything
//	go run ./tools/benchtable -short     # fewer iterations
//	go run ./tools/benchtable -js        # only the JS scripts (jsScripts), and only their js.* rows
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// suite is one `go test -bench` run.
type suite struct {
	Pkg       string // import path relative to the module root
	Bench     string // -bench pattern
	Benchtime string
	Count     int // runs of each benchmark; the table shows the median
}

var suites = []suite{
	// A fixed count of deltas: ApplyDelta pre-builds its events, and
	// millions of them would make the garbage collector the subject.
	{"./synccore", "ApplyDelta", "200000x", 5},
	{"./synccore", "SnapshotPage200|AppendFrames|DecodePart", "1s", 3},
	{"./server/store/sqlite", "CommitCheckpoint|Messages|Baseline|DecodePart", "300x", 3},
	{"./server/store/sqlite", "CommitConcurrent", "5000x", 3},
	// Search over a 100,000-message fixture committed through Commit
	// (built once per process, so once for the three runs).
	{"./server/store/sqlite", "Search", "300x", 3},
	// Starts a throwaway PostgreSQL cluster (server/internal/pgtest): needs
	// Debian's postgresql package, which `make bench` installs if missing.
	{"./server/store/postgres", ".", "300x", 3},
	{"./server/internal/fanout", ".", "1s", 3},
	{"./server/internal/session", "TurnDeltas", "5x", 3},
	{"./server/internal/session", "ComposeWindow", "300x", 3},
	{"./server/internal/session", "LoadedSession", "50x", 3},
	{"./server/model/openai", "Stream", "20x", 3},
	{"./server/model/anthropic", "Stream", "20x", 3},
	{"./server/internal/api", "FrameEncoder", "1s", 3},
	{"./server/uploads", "Upload|PlainPut", "5x", 3},
	{"./server/internal/e2e", "Fanout", "3x", 3},
	{"./server/internal/e2e", "MessagesHTTP", "1s", 3},
	// 2,000 WebSocket viewers, in a syncserver process and in process.
	{"./server/internal/e2e", "ViewerMemory", "1x", 3},
	// 1,000 to 10,000 WebSocket viewers of a syncserver process, and a
	// reconnect storm (about 10 minutes a run on 2 cores).
	{"./server/internal/e2e", "ManyViewers", "1x", 3},
	// Three nodes on a throwaway PostgreSQL and an embedded NATS server.
	{"./server/internal/multinode", "FanoutNodes", "3x", 3},
	{"./bindings", "ApplyDelta", "20000x", 5},
	{"./bindings", "HostDelta", "20000x", 5},
	{"./bindings", "StartWarmCache|NewInstance", "10x", 3},
	{"./cmd/agentsync", "DeltaToScreen|KeyToScreen", "20000x", 3},
}

// jsScripts are the JS host's benchmark scripts, run with node from the
// module root; each prints one JSON object per line (runJS).
var jsScripts = []string{
	"js/bench/apply.bench.js",
	"js/bench/e2e.bench.js",
	"js/bench/task.bench.js",
	"js/bench/warm.bench.js",
	"js/bench/page.bench.js",
	"js/bench/cache.bench.js",
	// task.bench.js's runs in a headless Chromium page, and the page's cold start (#32).
	"js/bench/chromium.bench.js",
}

func main() {
	short := flag.Bool("short", false, "fewer iterations (a smoke run)")
	jsOnly := flag.Bool("js", false, "run only the JS scripts and show only their rows (js.*)")
	flag.Parse()

	var all []result
	var failed []string
	if *jsOnly {
		rows = jsRows(rows)
		all, failed = runJSScripts()
		report(all, failed)
		return
	}
	for _, s := range suites {
		bt := s.Benchtime
		if *short {
			bt = "1x"
		}
		args := []string{"test", "-run", "^$", "-bench", s.Bench, "-benchmem", "-benchtime", bt,
			"-count", strconv.Itoa(s.Count), s.Pkg}
		fmt.Fprintf(os.Stderr, "go %s\n", strings.Join(args, " "))
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchtable: %s failed: %v\n%s\n", s.Pkg, err, out)
			failed = append(failed, s.Pkg+" -bench "+s.Bench)
			continue
		}
		all = append(all, parseGoBench(bytes.NewReader(out), strings.TrimPrefix(s.Pkg, "./"))...)
	}
	js, jsFailed := runJSScripts()
	all, failed = append(all, js...), append(failed, jsFailed...)
	follow, err := runFollow()
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtable: follow: %v\n", err)
		failed = append(failed, "follow")
	}
	all = append(all, follow...)
	sizes, err := moduleSizes("wasm/module/agentsync.wasm")
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtable: %v\n", err)
		failed = append(failed, "module size")
	}
	all = append(all, sizes...)
	report(all, failed)
}

// report prints the table of all and exits 1 when a suite failed (failed
// names them) or a row's benchmark never reported.
func report(all []result, failed []string) {
	sum := printTable(os.Stdout, all)
	fmt.Fprintf(os.Stderr, "benchtable: %d of %d targets missed\n", sum.missed, sum.checked)
	if len(sum.notRun) > 0 {
		failed = append(failed, "rows never reported: "+strings.Join(sum.notRun, ", "))
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "benchtable: FAILED: %s\n", strings.Join(failed, "; "))
		os.Exit(1)
	}
}

// runJSScripts runs every script of jsScripts; failed names those that failed.
func runJSScripts() (all []result, failed []string) {
	for _, script := range jsScripts {
		js, err := runJS(script)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchtable: %v\n", err)
			failed = append(failed, script)
		}
		all = append(all, js...)
	}
	return all, failed
}

// jsRows is the rows of the JS scripts (js.*): -js runs nothing else, and
// a row of another suite would only show as never reported.
func jsRows(all []row) []row {
	var js []row
	for _, r := range all {
		if strings.HasPrefix(r.Bench, "js.") {
			js = append(js, r)
		}
	}
	return js
}

// runJS runs the JS host's benchmark script, which prints one JSON object
// per line: {"name": ..., "ns_per_op": ..., "runs": ..., other metrics...}.
func runJS(script string) ([]result, error) {
	if _, err := os.Stat("js/bench/node_modules"); err != nil {
		// The e2e bench compares with the AI SDK, a dependency of the bench only.
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = "js/bench"
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("npm ci in js/bench: %v\n%s", err, out)
		}
	}
	fmt.Fprintf(os.Stderr, "node %s\n", script)
	cmd := exec.Command("node", script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s failed: %w", script, err)
	}
	var res []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		name, _ := line["name"].(string)
		if name == "" {
			continue
		}
		r := result{Name: "js." + name, Metrics: map[string]float64{}}
		for k, v := range line {
			f, ok := v.(float64)
			switch {
			case !ok:
			case k == "runs":
				r.Runs = int(f)
			default:
				r.Metrics[strings.ReplaceAll(k, "_per_", "/")] = f
			}
		}
		res = append(res, r)
	}
	return res, nil
}

// summary is what printTable found: targets checked and missed, and the
// rows whose benchmark never reported.
type summary struct {
	checked, missed int
	notRun          []string
}

func printTable(w io.Writer, all []result) summary {
	byName := map[string]result{}
	for _, r := range all {
		byName[r.Name] = r
	}
	var sum summary
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "benchmark\truns\tfigure\tbaseline\tbaseline figure\tratio\ttarget\tmet\t")
	seen := map[string]bool{}
	for _, row := range rows {
		r, ok := byName[row.Bench]
		if !ok {
			sum.notRun = append(sum.notRun, row.Bench)
			fmt.Fprintf(tw, "%s\t\t(not run)\t%s\t\t\t%s\t\t\n", row.Bench, row.Baseline, row.Target.Text)
			continue
		}
		seen[row.Bench] = true
		v, measured := r.Metrics[row.Metric]
		if !measured {
			// brotli-bytes needs the brotli command; a checked target whose
			// metric vanished is a renamed metric, which must not pass quietly.
			if row.Target.Checked {
				sum.notRun = append(sum.notRun, row.Bench+" "+row.Metric)
			}
			fmt.Fprintf(tw, "%s\t%d\t(no %s)\t%s\t\t\t%s\t\t\n", row.Bench, r.Runs, row.Metric, row.Baseline, row.Target.Text)
			continue
		}
		var bfig, ratio string
		var rv float64
		haveRatio := false
		if row.Baseline != "" {
			b, bok := byName[row.Baseline]
			bv, mok := b.Metrics[row.BaselineMetric()]
			seen[row.Baseline] = seen[row.Baseline] || bok
			switch {
			case !bok || !mok:
				bfig = "(not run)"
			default:
				bfig = fmtMetric(bv, row.BaselineMetric())
				if bv != 0 {
					rv, haveRatio = v/bv, true
					ratio = fmt.Sprintf("%.2fx", rv)
				}
			}
		}
		met := row.Target.verdict(v, rv, haveRatio)
		if met != "" {
			sum.checked++
		}
		if met == "MISSED" {
			sum.missed++
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Bench, r.Runs, fmtMetric(v, row.Metric),
			row.Baseline, bfig, ratio, row.Target.Text, met)
	}
	// Anything measured that no row names still shows, so nothing hides.
	var rest []string
	for name := range byName {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		r := byName[name]
		fmt.Fprintf(tw, "%s\t%d\t%s\t(baseline itself or unlisted)\t\t\t\t\t\n", name, r.Runs, fmtMetric(r.Metrics["ns/op"], "ns/op"))
	}
	tw.Flush()
	return sum
}

func fmtMetric(v float64, unit string) string {
	if unit == "ns/op" {
		switch {
		case v >= 1e6:
			return fmt.Sprintf("%.1f ms/op", v/1e6)
		case v >= 1e4:
			return fmt.Sprintf("%.0f µs/op", v/1e3)
		case v >= 1e3:
			return fmt.Sprintf("%.2f µs/op", v/1e3)
		}
	}
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3g M %s", v/1e6, unit)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	default:
		return fmt.Sprintf("%.3g %s", v, unit)
	}
}
