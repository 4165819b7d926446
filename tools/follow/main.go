// Command follow measures a Go host following one long answer: it creates a
// session on a running server, asks the scripted model for
// `scenario:long chars=N delta=D`, follows it with bindings (the
// WebAssembly core under wazero, or the native core) through a Subscribe
// listener, and prints one JSON line: deltas/s, CPU seconds, peak RSS and
// the module's linear memory. It runs in its own process so that its peak
// RSS is the host's alone; tools/benchtable and bindings' memory test run it.
//
//	go run ./tools/follow -url http://127.0.0.1:8080 -chars 1000000 -core wasm
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/synccore"
)

// Result is the line follow prints.
type Result struct {
	Core         string  `json:"core"`
	Chars        int     `json:"chars"`
	Deltas       int     `json:"deltas"`
	Seconds      float64 `json:"seconds"`
	DeltasPerSec float64 `json:"deltas_per_sec"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	MaxRSSBytes  int64   `json:"max_rss_bytes"`
	ModuleBytes  uint64  `json:"module_bytes"`
	Renders      int     `json:"renders"`
	// SeenChars is the longest answer text the listener saw.
	SeenChars int `json:"seen_chars"`
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "the server's base URL")
	chars := flag.Int("chars", 100_000, "length of the answer")
	delta := flag.Int("delta", 8, "characters per delta")
	core := flag.String("core", "wasm", "wasm or native")
	memLimit := flag.Uint("module-mem-mb", 0, "bound on the module's linear memory, MiB (0: default)")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after")
	flag.Parse()
	res, err := follow(*url, *core, *chars, *delta, uint32(*memLimit), *timeout)
	if err != nil {
		log.Fatal(err)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

func follow(url, coreName string, chars, delta int, memMB uint32, timeout time.Duration) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := Result{Core: coreName, Chars: chars}
	cfg := bindings.Config{BaseURL: url}
	var rt *core.Runtime
	switch coreName {
	case "native":
		cfg.Core = core.NewNativeCore()
	case "wasm":
		var err error
		rt, err = core.NewRuntime(ctx, core.RuntimeConfig{MemoryLimitPages: memMB * 16})
		if err != nil {
			return res, err
		}
		defer rt.Close(ctx)
		cfg.Runtime = rt
	default:
		return res, fmt.Errorf("-core %q: want wasm or native", coreName)
	}
	api := &bindings.API{BaseURL: url}
	sess, err := api.CreateSession(ctx, "")
	if err != nil {
		return res, err
	}
	cfg.SessionID = sess.SessionID
	c, err := bindings.Dial(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer c.Close()

	// The listener reads what the view holds of the answer, as an app
	// rendering it would.
	var mu sync.Mutex // the listener runs on the client's subscriber goroutine
	unsub := c.Subscribe(func(v bindings.View) {
		mu.Lock()
		defer mu.Unlock()
		res.Renders++
		if last, ok := v.Messages.Last(); ok {
			for _, p := range last.Parts {
				if p.Type == synccore.PartText {
					res.SeenChars = max(res.SeenChars, len(p.Text))
				}
			}
		}
	})
	defer unsub()

	start := time.Now()
	cpu0 := cpuSeconds()
	sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: fmt.Sprintf("scenario:long chars=%d delta=%d", chars, delta)})
	if err != nil {
		return res, err
	}
	err = c.WaitFor(ctx, func(v bindings.View) bool {
		last, ok := v.Messages.Last()
		return ok && last.Sequence > sent.Sequence && last.Done()
	})
	if err != nil {
		return res, err
	}
	mu.Lock()
	defer mu.Unlock()
	res.Seconds = time.Since(start).Seconds()
	res.CPUSeconds = cpuSeconds() - cpu0
	last, _ := c.View().Messages.Last()
	got := 0
	for _, p := range last.Parts {
		if p.Type == synccore.PartText {
			got += len(p.Text)
		}
	}
	if got < chars {
		return res, fmt.Errorf("answer has %d characters, want %d", got, chars)
	}
	res.Deltas = (chars + delta - 1) / delta
	res.DeltasPerSec = float64(res.Deltas) / res.Seconds
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	res.MaxRSSBytes = ru.Maxrss * 1024
	if rt != nil {
		res.ModuleBytes = rt.MaxMemoryBytes()
	}
	return res, nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
