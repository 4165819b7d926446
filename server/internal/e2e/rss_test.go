//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// The memory bound of the issue: touched once each, then idle, 20,000
// sessions leave the server's resident memory within 150 MB of the empty
// server's (README "Memory"). Sized for 2 cores: about a minute.
const (
	rssSessions = 20000
	rssWorkers  = 8
	rssIdle     = 300 * time.Millisecond
	rssBoundMiB = 150
)

// TestSoakRSS runs the real binary (no race detector in it), touches
// 20,000 sessions once each with a short exchange, lets them go idle, and
// checks that the process's RSS comes back within rssBoundMiB of what it
// was empty, and that every session reads back complete.
func TestSoakRSS(t *testing.T) {
	bin := buildServer(t)
	p := startProc(t, bin, "-db", filepath.Join(t.TempDir(), "rss.db"), "-speed", "0",
		"-idle-timeout", rssIdle.String(), "-max-loaded", "100", "-rate-limit", "-1", "-log-level", "warn")
	pid := p.cmd.Process.Pid

	// The empty figure is taken after one exchange, so it includes what
	// any use allocates once (pools, the model, the SQLite connections).
	if _, err := shortExchange(p.URL, -1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * rssIdle)
	empty := rssMiB(t, pid)

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the peak, sampled
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if mib, err := readRSS(pid); err == nil && int64(mib) > peak.Load() {
					peak.Store(int64(mib))
				}
			}
		}
	}()
	began := time.Now()
	ids := make([]string, rssSessions)
	errs := forEach(rssSessions, rssWorkers, func(i int) error {
		sid, err := shortExchange(p.URL, i)
		ids[i] = sid
		return err
	})
	close(stop)
	<-sampled
	if len(errs) > 0 {
		t.Fatalf("%d exchanges failed, first: %v", len(errs), errs[0])
	}
	touched := time.Since(began)

	// Every session reads back complete: the prompt and a finished answer
	// (a turn still running is waited for).
	errs = forEach(rssSessions, rssWorkers, func(i int) error {
		return readBackDone(p.URL, ids[i], fmt.Sprintf("soak %d", i))
	})
	if len(errs) > 0 {
		t.Fatalf("%d sessions incomplete, first: %v", len(errs), errs[0])
	}

	// Idle: every session leaves memory, and the Go runtime hands the
	// freed pages back to the OS over the next seconds.
	var after float64
	deadline := time.Now().Add(60 * time.Second)
	for {
		time.Sleep(time.Second)
		after = rssMiB(t, pid)
		if after-empty <= rssBoundMiB || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("RSS empty %.0f MiB, peak %d MiB while touching %d sessions (%s), %.0f MiB idle after: %.0f MiB over empty (bound %d)",
		empty, peak.Load(), rssSessions, touched.Round(time.Second), after, after-empty, rssBoundMiB)
	if after-empty > rssBoundMiB {
		t.Fatalf("RSS %.0f MiB over the empty server's after %d sessions went idle, bound %d MiB", after-empty, rssSessions, rssBoundMiB)
	}
}

// forEach runs f(0..n-1) on workers goroutines and returns its errors.
func forEach(n, workers int, f func(i int) error) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

// readBackDone reads a session until its answer is done (at most 30 s) and
// checks it holds the prompt and a finished answer.
func readBackDone(base, sid, prompt string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := soakClient.Get(base + "/v1/sessions/" + sid + "/messages")
		if err != nil {
			return err
		}
		var page synccore.MessagePage
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("session %s: %d %v", sid, resp.StatusCode, err)
		}
		msgs := page.Items
		if len(msgs) == 2 && msgs[1].State == synccore.MessageDone {
			if msgs[0].Parts[0].Text != prompt || msgs[1].Role != synccore.RoleAgent || len(msgs[1].Parts) == 0 {
				return fmt.Errorf("session %s: %s", sid, summary(msgs))
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s never finished: %s", sid, summary(msgs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func rssMiB(t *testing.T, pid int) float64 {
	t.Helper()
	mib, err := readRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return mib
}

// readRSS is the process's resident set (VmRSS) in MiB.
func readRSS(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
