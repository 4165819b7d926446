package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

// buildServer builds the real syncserver binary once per test run.
func buildServer(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "syncserver-e2e-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "syncserver")
		cmd := exec.Command("go", "build", "-o", binPath, "./server/cmd/syncserver")
		cmd.Dir = repoRoot(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("build syncserver: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// repoRoot is the module root (this package lives in server/e2e).
func repoRoot(t testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..", "..")
}

// proc is one running syncserver process.
type proc struct {
	cmd  *exec.Cmd
	URL  string
	done chan error
}

// startProc starts the binary on a free loopback port and waits for its
// "listening on" line.
func startProc(t testing.TB, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() || os.Getenv("E2E_LOG") != "" {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urlc <- u
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.URL = <-urlc:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("syncserver exited before listening: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("syncserver did not start listening within 60s")
	}
	return p
}

// wait waits for the process to exit on its own.
func (p *proc) wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(timeout):
		t.Fatalf("syncserver did not exit within %s", timeout)
		return nil
	}
}

// client returns a testServer view (HTTP helpers only) of a process.
func (p *proc) client(t testing.TB) *testServer {
	return &testServer{t: t, URL: p.URL}
}
