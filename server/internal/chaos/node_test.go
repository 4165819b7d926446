package chaos

import (
	"bufio"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// node is one syncserver process. Its NATS connection goes through a
// proxy of its own (link), so that one node alone can be cut off NATS.
type node struct {
	name string
	cmd  *exec.Cmd
	addr string // host:port it listens on
	link *proxy // its way to NATS
	log  string // its log file
}

// startNode runs syncserver as a node of the cluster on database db.
func startNode(t *testing.T, name, db string, link *proxy, lease time.Duration) *node {
	t.Helper()
	n := &node{name: name, link: link, log: filepath.Join(t.TempDir(), name+".log")}
	logf, err := os.Create(n.log)
	if err != nil {
		t.Fatal(err)
	}
	n.cmd = exec.Command(syncserverBin, "-addr", "127.0.0.1:0", "-log-level", logLevel(),
		"-store", db, "-node", name, "-lease-ttl", lease.String(), "-nats", "nats://"+link.addr(),
		"-speed", "2ms", "-rate-limit", "-1")
	n.cmd.Stderr = logf
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = n.cmd.Process.Signal(syscall.SIGCONT) // a paused node cannot die otherwise
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
		logf.Close()
		if t.Failed() || os.Getenv("AGENTSYNC_CHAOS_LOGS") != "" {
			if b, _ := os.ReadFile(n.log); len(b) > 0 {
				t.Logf("log of %s:\n%s", name, tail(string(b), 300))
			}
		}
	})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				listening <- u
			}
		}
	}()
	select {
	case u := <-listening:
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatalf("%s listens on %q: %v", name, u, err)
		}
		n.addr = pu.Host
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not listen within 60 s", name)
	}
	return n
}

func (n *node) url() string { return "http://" + n.addr }

func (n *node) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s to %s: %v", sig, n.name, err)
	}
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// logLevel is the nodes' log level: info unless AGENTSYNC_CHAOS_LOGS
// says otherwise. At info a whole TestChaos run logs ~200 lines over its
// nodes (ownership, takeovers, lease renewals, NATS state): cheap, and a
// failure that does not replay with its seed is read from them.
func logLevel() string {
	if l := os.Getenv("AGENTSYNC_CHAOS_LOGS"); l != "" {
		return l
	}
	return "info"
}
