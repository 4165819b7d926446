package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// result is one benchmark line of `go test -bench` output (or one JSON line
// of the JS benchmark, converted): its name without the -GOMAXPROCS suffix
// and every "value unit" pair it reported.
type result struct {
	Name    string
	Metrics map[string]float64
}

// parseGoBench reads `go test -bench` output. Lines that are not benchmark
// results are ignored; the last result of a name wins.
func parseGoBench(r io.Reader, pkg string) []result {
	var out []result
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
		out = append(out, res)
	}
	return out
}
