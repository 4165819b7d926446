// Command benchtable runs every benchmark of the repository (Go testing.B
// benchmarks and the JavaScript host's benchmark script) and prints one
// table: each figure beside the baseline measured in the same run, their
// ratio, and the target it is held to. These machines are noisy, so ratios
// against a same-run baseline are the figures to trust.
//
//	go run ./tools/benchtable            # everything
//	go run ./tools/benchtable -short     # fewer iterations
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
	{"./server/store", ".", "300x", 1},
	{"./server/fanout", ".", "1s", 3},
	{"./server/session", "TurnDeltas", "5x", 1},
	{"./server/session", "ComposeWindow", "300x", 3},
	{"./server/model", "Stream", "20x", 3},
	{"./server/api", "FrameEncoder", "1s", 3},
	{"./server/e2e", "Fanout", "3x", 3},
	{"./server/e2e", "MessagesHTTP", "1s", 1},
	{"./bindings", "ApplyDelta", "20000x", 5},
	{"./bindings", "StartWarmCache|NewInstance", "10x", 3},
}

func main() {
	short := flag.Bool("short", false, "fewer iterations (a smoke run)")
	flag.Parse()

	var all []result
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
			continue
		}
		all = append(all, parseGoBench(bytes.NewReader(out), strings.TrimPrefix(s.Pkg, "./"))...)
	}
	all = append(all, runJS()...)
	all = append(all, moduleSizes("wasm/module/agentsync.wasm")...)
	printTable(os.Stdout, all)
}

// runJS runs the JS host's benchmark script, which prints one JSON object
// per line: {"name": ..., "ns_per_op": ..., other metrics...}.
func runJS() []result {
	const script = "js/bench/apply.bench.js"
	if _, err := os.Stat(script); err != nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "node %s\n", script)
	out, err := exec.Command("node", script).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtable: %s failed: %v\n", script, err)
		return nil
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
			if f, ok := v.(float64); ok {
				r.Metrics[strings.ReplaceAll(k, "_per_", "/")] = f
			}
		}
		res = append(res, r)
	}
	return res
}

func printTable(w io.Writer, all []result) {
	byName := map[string]result{}
	for _, r := range all {
		byName[r.Name] = r
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "benchmark\tfigure\tbaseline\tbaseline figure\tratio\ttarget\t")
	seen := map[string]bool{}
	for _, row := range rows {
		r, ok := byName[row.Bench]
		if !ok {
			fmt.Fprintf(tw, "%s\t(not run)\t%s\t\t\t%s\t\n", row.Bench, row.Baseline, row.Target)
			continue
		}
		seen[row.Bench] = true
		v := r.Metrics[row.Metric]
		bv, bok := byName[row.Baseline].Metrics[row.BaselineMetric()]
		seen[row.Baseline] = seen[row.Baseline] || bok
		ratio := ""
		if bok && bv != 0 {
			ratio = fmt.Sprintf("%.2fx", v/bv)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Bench, fmtMetric(v, row.Metric), row.Baseline,
			fmtMetric(bv, row.BaselineMetric()), ratio, row.Target)
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
		fmt.Fprintf(tw, "%s\t%s\t(baseline itself or unlisted)\t\t\t\t\n", name, fmtMetric(r.Metrics["ns/op"], "ns/op"))
	}
	tw.Flush()
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
