package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// follow.go measures the Go host following one long answer from a real
// server (its own process, one delta per WebSocket message or so): peak
// RSS, the module's linear memory, CPU and deltas/s, with the WebAssembly
// core and with the native core in the same run (tools/follow), and the
// Node host the same way (js/bench/follow.mjs).

var followSizes = []struct {
	name  string
	chars int
}{{"100KB", 100_000}, {"1MB", 1_000_000}, {"10MB", 10_000_000}}

func runFollow() ([]result, error) {
	dir, err := os.MkdirTemp("", "benchtable-follow")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, b := range []struct{ out, pkg string }{{"syncserver", "./server/cmd/syncserver"}, {"follow", "./tools/follow"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b.out), b.pkg).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build %s: %v\n%s", b.pkg, err, out)
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	srv := exec.Command(filepath.Join(dir, "syncserver"), "-addr", addr, "-db", filepath.Join(dir, "bench.db"), "-speed", "1us", "-log-level", "error")
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	url := "http://" + addr
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			return nil, fmt.Errorf("server on %s did not start", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Every figure is the median of followRuns runs, taken round-robin so
	// that a noisy stretch of the machine hits every core alike.
	var names []string
	runs := map[string][]map[string]float64{}
	for run := 0; run < followRuns; run++ {
		for _, size := range followSizes {
			for _, core := range []string{"wasm", "native", "node"} {
				m, err := followOnce(dir, url, core, size.chars)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %v", core, size.name, err)
				}
				name := "follow." + core + "/" + size.name
				if run == 0 {
					names = append(names, name)
				}
				runs[name] = append(runs[name], m)
			}
		}
	}
	res := make([]result, 0, len(names))
	for _, name := range names {
		res = append(res, result{Name: name, Runs: len(runs[name]), Metrics: medians(runs[name])})
	}
	return res, nil
}

// followRuns is how many times each follow run is repeated.
const followRuns = 3

// followOnce follows one answer of chars characters with the given core
// (wasm, native: tools/follow; node: js/bench/follow.mjs) and returns its figures.
func followOnce(dir, url, core string, chars int) (map[string]float64, error) {
	fmt.Fprintf(os.Stderr, "follow -core %s -chars %d\n", core, chars)
	cmd := exec.Command(filepath.Join(dir, "follow"), "-url", url, "-core", core, "-chars", fmt.Sprint(chars))
	if core == "node" { // the Node host, the same way (js/bench/follow.mjs)
		cmd = exec.Command("node", "--experimental-websocket", "js/bench/follow.mjs", url, fmt.Sprint(chars))
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var f struct {
		DeltasPerSec float64 `json:"deltas_per_sec"`
		CPUSeconds   float64 `json:"cpu_seconds"`
		MaxRSSBytes  float64 `json:"max_rss_bytes"`
		ModuleBytes  float64 `json:"module_bytes"`
		MaxHeapBytes float64 `json:"max_heap_bytes"`
	}
	if err := json.NewDecoder(bufio.NewReader(strings.NewReader(string(out)))).Decode(&f); err != nil {
		return nil, fmt.Errorf("%q: %v", out, err)
	}
	return map[string]float64{
		"deltas/s": f.DeltasPerSec, "cpu-s": f.CPUSeconds, "rss-MB": f.MaxRSSBytes / (1 << 20), "module-MB": f.ModuleBytes / (1 << 20),
		"heap-MB": f.MaxHeapBytes / (1 << 20),
	}, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
