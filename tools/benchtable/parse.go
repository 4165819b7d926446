package main

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// result is one benchmark line of `go test -bench` output (or one JSON line
// of the JS benchmark, converted): its name without the -GOMAXPROCS suffix
// and every "value unit" pair it reported.
type result struct {
	Name    string
	Metrics map[string]float64
	Runs    int // how many runs each metric is the median of
}

// parseGoBench reads `go test -bench` output. Lines that are not benchmark
// results are ignored. A name run several times (-count) reports the
// median of each metric: these machines are noisy, and the median neither
// flatters (min) nor punishes (max) a run.
func parseGoBench(r io.Reader, pkg string) []result {
	var order []string
	runs := map[string][]map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		res := result{Name: pkg + "." + strings.TrimPrefix(name, "Benchmark"), Metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			res.Metrics[f[i+1]] = v
		}
		if _, ok := runs[res.Name]; !ok {
			order = append(order, res.Name)
		}
		runs[res.Name] = append(runs[res.Name], res.Metrics)
	}
	out := make([]result, 0, len(order))
	for _, name := range order {
		out = append(out, result{Name: name, Metrics: medians(runs[name]), Runs: len(runs[name])})
	}
	return out
}

// medians is, for each metric, its median over the runs that report it.
func medians(runs []map[string]float64) map[string]float64 {
	vals := map[string][]float64{}
	for _, m := range runs {
		for k, v := range m {
			vals[k] = append(vals[k], v)
		}
	}
	med := make(map[string]float64, len(vals))
	for k, v := range vals {
		sort.Float64s(v)
		if n := len(v); n%2 == 1 {
			med[k] = v[n/2]
		} else {
			med[k] = (v[n/2-1] + v[n/2]) / 2
		}
	}
	return med
}
