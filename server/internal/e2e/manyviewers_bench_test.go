//go:build linux

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// Many viewers on one node (issue 33 item 5): every session streams a
// paced answer at once to all its live WebSocket subscribers, beside one
// session with one subscriber streaming the same answer. Then a reconnect
// storm: the node restarts and every subscriber reconnects at once.
const (
	mvChars = 20000                // runes of the answer
	mvDelta = 50                   // runes per delta: 400 deltas
	mvPace  = 5 * time.Millisecond // per delta (-speed): the answer takes ~2 s alone
	mvMark  = 250                  // bytes of text between two spread samples
	// mvCaseTimeout bounds one case's waits (subscribing, the answers,
	// the storm): a case that needs longer fails instead of hanging.
	mvCaseTimeout = 90 * time.Second
)

// BenchmarkManyViewers/viewers=N/sessions=S: N subscribers (?kept=1, as
// the reference hosts subscribe) spread evenly over S sessions of a
// syncserver process (no race detector), each session streaming a 20,000
// character answer at 5 ms per delta at once. Figures:
//
//   - answer-ms: from the answer's POST to the last viewer of its
//     session holding the done message, the slowest session's;
//     viewers=1/sessions=1 is the baseline (target <=1.5x of it).
//   - spread-p50-ms / spread-p99-ms: for every 250 bytes of an answer's
//     text, the time between the first and the last viewer of the session
//     to receive it (target p99 < 100 ms).
//   - resyncs: resync frames, seq gaps and lost connections (must be 0).
//   - server-cpu-ms / client-cpu-ms: the CPU time the server process and
//     this one (the viewers) spent meanwhile: on a loaded machine the
//     durations measure the load as much as the server.
//
// BenchmarkManyViewers/storm/viewers=N: N viewers over 100 sessions of a
// node that is stopped (SIGTERM, its drain) and started again on the same
// address and database; once it listens, every viewer reconnects at once
// and reads its head page as a client does after a reconnect (§6.5), with
// the backoff of §6.4 after a failed attempt. live-ms is the time until
// the last one is live, refused the attempts that failed (target <=3 s and
// 0), listen-drops the kernel's listen queue overflows meanwhile (TcpExt
// ListenDrops, of the whole network namespace).
//
// Both ends need a file descriptor per viewer (the benchmark raises its
// limit to the hard one, which the server inherits; see docs/server.md
// "Many viewers" for the kernel settings). Cases the limit cannot hold are
// skipped. The 5,000 and 10,000 cases take about a minute each on 2 cores;
// -short runs the 1,000 ones only.
func BenchmarkManyViewers(b *testing.B) {
	raiseFileLimit(b)
	b.Run("viewers=1/sessions=1", func(b *testing.B) { benchLiveViewers(b, 1, 1) })
	for _, n := range []int{1000, 5000, 10000} {
		for _, s := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("viewers=%d/sessions=%d", n, s), func(b *testing.B) { benchLiveViewers(b, n, s) })
			if s != 10 {
				// Every batch delivered at once: what pacing saves.
				b.Run(fmt.Sprintf("viewers=%d/sessions=%d/unpaced", n, s), func(b *testing.B) {
					benchLiveViewers(b, n, s, "-write-interval", "-1ns")
				})
			}
		}
	}
	for _, n := range []int{1000, 5000, 10000} {
		b.Run(fmt.Sprintf("storm/viewers=%d", n), func(b *testing.B) { benchStorm(b, n, 100) })
	}
}

// raiseFileLimit raises the soft limit on open files to the hard one (Go
// does so at start since 1.19; this says it, and the child inherits it).
func raiseFileLimit(b *testing.B) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		b.Fatal(err)
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			b.Fatal(err)
		}
	}
}

// needFiles skips a case whose viewers the file limit cannot hold (a
// viewer's socket, plus some for the HTTP client, the store and the rest).
func needFiles(b *testing.B, viewers int) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		b.Fatal(err)
	}
	if need := uint64(viewers + 1024); l.Cur < need {
		b.Skipf("open files limit %d, %d viewers need %d (ulimit -n)", l.Cur, viewers, need)
	}
	if testing.Short() && viewers > 1000 {
		b.Skip("-short: up to 1,000 viewers")
	}
}

// mvNode is a syncserver process with sessions that each had a first
// exchange.
type mvNode struct {
	bin, db, addr string
	p             *proc
	s             *testServer
	ids           []string
	flags         []string // more syncserver flags
}

func startNode(b *testing.B, sessions int, flags ...string) *mvNode {
	n := &mvNode{bin: buildServer(b), db: filepath.Join(b.TempDir(), "viewers.db"), addr: "127.0.0.1:0", flags: flags}
	n.start(b)
	n.ids = make([]string, sessions)
	for i := range n.ids {
		n.ids[i] = n.s.createSession()
	}
	errs := forEach(sessions, 16, func(i int) error {
		n.s.say(n.ids[i], "scenario:text chars=20 delta=20")
		return nil
	})
	if len(errs) > 0 {
		b.Fatal(errs[0])
	}
	for _, sid := range n.ids {
		n.s.waitIdle(sid, 2)
	}
	return n
}

func (n *mvNode) start(b *testing.B) {
	args := []string{"-addr", n.addr, "-db", n.db, "-speed", mvPace.String(), "-rate-limit", "-1",
		"-max-subscribers-per-session", "-1", "-max-subscribers-per-principal", "-1", "-log-level", "warn"}
	n.p = startProc(b, n.bin, append(args, n.flags...)...)
	n.addr = strings.TrimPrefix(n.p.URL, "http://")
	n.s = n.p.client(b)
}

// restart stops the node as a deploy does (SIGTERM: it drains) and
// starts it again on the same address and database.
func (n *mvNode) restart(b *testing.B) {
	if err := n.p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	if err := n.p.wait(b, 30*time.Second); err != nil {
		b.Logf("syncserver exited: %v", err)
	}
	n.start(b)
}

// liveViewer is one raw WebSocket reader of a session: it decodes every
// message, checks the numbering, and notes when it received each mvMark
// bytes of the streamed answer and its done message.
type liveViewer struct {
	sess  int
	c     *websocket.Conn
	hello chan struct{}
	// Read by the benchmark once done is set (or after the reader ended).
	marks []time.Duration // marks[k]: text reached (k+1)*mvMark bytes
	done  atomic.Int64    // ns after t0 the done answer arrived; 0: not yet
	lost  atomic.Int32    // resync frames, gaps, broken messages, lost sockets
	msgs  atomic.Int64    // WebSocket messages read
	ended chan struct{}
}

// dialViewers subscribes n viewers, viewer i to session i%len(ids), and
// waits for all their hellos.
func dialViewers(b testing.TB, url func(sid string) string, ids []string, n int, t0 *atomic.Pointer[time.Time]) []*liveViewer {
	vs := make([]*liveViewer, n)
	errs := forEach(n, 32, func(i int) error {
		c, _, err := websocket.DefaultDialer.Dial(url(ids[i%len(ids)])+"?kept=1", nil)
		if err != nil {
			return fmt.Errorf("viewer %d: %w", i, err)
		}
		v := &liveViewer{sess: i % len(ids), c: c, hello: make(chan struct{}), ended: make(chan struct{}),
			marks: make([]time.Duration, 0, mvChars/mvMark+1)}
		vs[i] = v
		go v.read(t0)
		return nil
	})
	if len(errs) > 0 {
		b.Fatalf("%d viewers failed to subscribe, first: %v", len(errs), errs[0])
	}
	deadline := time.After(mvCaseTimeout)
	for i, v := range vs {
		select {
		case <-v.hello:
		case <-deadline:
			b.Fatalf("viewer %d: no hello within %s", i, mvCaseTimeout)
		}
	}
	return vs
}

func (v *liveViewer) read(t0p *atomic.Pointer[time.Time]) {
	defer close(v.ended)
	var last uint64
	for {
		_, data, err := v.c.ReadMessage()
		v.msgs.Add(1)
		if err != nil {
			if v.done.Load() == 0 {
				v.lost.Add(1)
			}
			return
		}
		frames, err := wire.DecodeFrames(data)
		if err != nil {
			v.lost.Add(1)
			return
		}
		var now time.Duration
		if t0 := t0p.Load(); t0 != nil {
			now = time.Since(*t0)
		}
		for i := range frames {
			f := &frames[i]
			if f.Seq != last+1 {
				v.lost.Add(1)
				return
			}
			last = f.Seq
			switch f.Kind {
			case synccore.FrameHello:
				close(v.hello)
			case synccore.FrameDelta:
				for end := f.Offset + int64(len(f.Text)); int64(len(v.marks)+1)*mvMark <= end; {
					v.marks = append(v.marks, now)
				}
			case synccore.FrameMessage:
				if m := f.Message; m.Role == synccore.RoleAgent && m.Done() && v.done.Load() == 0 {
					v.done.Store(max(int64(now), 1))
				}
			case synccore.FrameResync, synccore.FrameError:
				v.lost.Add(1)
				return
			}
		}
	}
}

func closeViewers(vs []*liveViewer) {
	for _, v := range vs {
		if v != nil {
			v.c.Close()
		}
	}
	for _, v := range vs {
		if v != nil {
			<-v.ended
		}
	}
}

func benchLiveViewers(b *testing.B, viewers, sessions int, flags ...string) {
	needFiles(b, viewers)
	n := startNode(b, sessions, flags...)
	var t0 atomic.Pointer[time.Time]
	vs := dialViewers(b, n.s.wsURL, n.ids, viewers, &t0)
	defer closeViewers(vs)
	time.Sleep(500 * time.Millisecond) // the subscriptions settle (their goroutines, buffers)
	b.ResetTimer()
	for range b.N {
		for _, v := range vs {
			v.marks = v.marks[:0]
			v.done.Store(0)
		}
		srvCPU, ownCPU := procCPU(b, n.p.cmd.Process.Pid), selfCPU()
		msgs := int64(0)
		for _, v := range vs {
			msgs -= v.msgs.Load()
		}
		start := time.Now()
		t0.Store(&start)
		posted := make([]time.Duration, sessions)
		errs := forEach(sessions, 16, func(i int) error {
			posted[i] = time.Since(start)
			n.s.say(n.ids[i], fmt.Sprintf("scenario:text chars=%d delta=%d", mvChars, mvDelta))
			return nil
		})
		if len(errs) > 0 {
			b.Fatal(errs[0])
		}
		deadline := time.Now().Add(mvCaseTimeout)
		for i, v := range vs {
			for v.done.Load() == 0 {
				if time.Now().After(deadline) || v.lost.Load() > 0 {
					b.Fatalf("viewer %d of session %d: no done answer (lost %d, %d marks)", i, v.sess, v.lost.Load(), len(v.marks))
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		b.StopTimer()
		b.ReportMetric(ms(procCPU(b, n.p.cmd.Process.Pid)-srvCPU), "server-cpu-ms")
		b.ReportMetric(ms(selfCPU()-ownCPU), "client-cpu-ms")
		for _, v := range vs {
			msgs += v.msgs.Load()
		}
		b.ReportMetric(float64(msgs)/float64(viewers), "msgs/viewer")
		// Per session: the answer's duration (its last viewer), and the
		// spread of every mark over its viewers.
		bySession := make([][]*liveViewer, sessions)
		for _, v := range vs {
			bySession[v.sess] = append(bySession[v.sess], v)
		}
		var answers, spreads []time.Duration
		lost := 0
		for si, group := range bySession {
			last := time.Duration(0)
			for _, v := range group {
				last = max(last, time.Duration(v.done.Load()))
				lost += int(v.lost.Load())
			}
			answers = append(answers, last-posted[si])
			for k := range group[0].marks {
				lo, hi := group[0].marks[k], group[0].marks[k]
				for _, v := range group[1:] {
					if k < len(v.marks) {
						lo, hi = min(lo, v.marks[k]), max(hi, v.marks[k])
					}
				}
				spreads = append(spreads, hi-lo)
			}
		}
		slices.Sort(answers)
		slices.Sort(spreads)
		b.ReportMetric(ms(answers[len(answers)-1]), "answer-ms")
		b.ReportMetric(ms(answers[len(answers)/2]), "answer-p50-ms")
		b.ReportMetric(ms(pct(spreads, 50)), "spread-p50-ms")
		b.ReportMetric(ms(pct(spreads, 99)), "spread-p99-ms")
		b.ReportMetric(float64(lost), "resyncs")
		b.StartTimer()
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

func benchStorm(b *testing.B, viewers, sessions int) {
	needFiles(b, viewers)
	n := startNode(b, sessions)
	var t0 atomic.Pointer[time.Time]
	vs := dialViewers(b, n.s.wsURL, n.ids, viewers, &t0)
	pages := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 256, MaxIdleConnsPerHost: 256}, Timeout: mvCaseTimeout}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		n.restart(b)
		for _, v := range vs {
			<-v.ended // the drain closed every subscription
			v.c.Close()
		}
		drops := listenDrops(b)
		b.StartTimer()
		start := time.Now()
		var refused, failed atomic.Int64
		var wg sync.WaitGroup
		var mu sync.Mutex
		var lastLive time.Duration
		conns := make([]*websocket.Conn, viewers)
		for i := range viewers {
			wg.Go(func() {
				sid := n.ids[i%len(n.ids)]
				for attempt := 1; ; attempt++ {
					if time.Since(start) > mvCaseTimeout {
						failed.Add(1)
						return
					}
					c, err := reconnect(pages, n.s, sid)
					if err != nil {
						refused.Add(1)
						// §6.4: min(30000, 250 × 2^(n-1)) × (500 + jitter/2) / 1000 ms.
						wait := min(30000, 250<<min(attempt-1, 10)) * (500 + rand.IntN(1001)/2) / 1000
						time.Sleep(time.Duration(wait) * time.Millisecond)
						continue
					}
					conns[i] = c
					mu.Lock()
					lastLive = max(lastLive, time.Since(start))
					mu.Unlock()
					return
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		b.ReportMetric(ms(lastLive), "live-ms")
		b.ReportMetric(float64(refused.Load()), "refused")
		b.ReportMetric(float64(listenDrops(b)-drops), "listen-drops")
		if failed.Load() > 0 {
			b.Errorf("%d viewers not live within %s", failed.Load(), mvCaseTimeout)
		}
		// The next iteration (and the cleanup) restart from these.
		for i, c := range conns {
			if c == nil {
				continue
			}
			v := &liveViewer{sess: i % len(n.ids), c: c, hello: make(chan struct{}), ended: make(chan struct{})}
			close(v.hello)
			vs[i] = v
			go func() {
				defer close(v.ended)
				for {
					if _, _, err := c.ReadMessage(); err != nil {
						return
					}
				}
			}()
		}
		b.StartTimer()
	}
	b.StopTimer()
	closeViewers(vs)
}

// reconnect is one attempt of a client's reconnect: subscribe, take the
// hello, read the head page (§6.3, §6.5: one page, whatever the history).
func reconnect(pages *http.Client, s *testServer, sid string) (*websocket.Conn, error) {
	c, _, err := websocket.DefaultDialer.Dial(s.wsURL(sid)+"?kept=1", nil)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(mvCaseTimeout))
	_, data, err := c.ReadMessage()
	if err != nil {
		return nil, err
	}
	frames, err := wire.DecodeFrames(data)
	if err != nil || frames[0].Kind != synccore.FrameHello {
		return nil, fmt.Errorf("first message is not a hello: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	req, _ := http.NewRequest("GET", s.URL+"/v1/sessions/"+sid+"/messages?limit=50", nil)
	req.Header.Set("Accept", "application/msgpack")
	resp, err := pages.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("page: %s", resp.Status)
	}
	ok = true
	return c, nil
}

// procCPU is the user and system CPU time a process used so far.
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command's closing parenthesis: utime and stime are
	// the 12th and 13th, in clock ticks (100 per second on Linux).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// listenDrops is TcpExt ListenDrops of /proc/net/netstat: SYNs and
// connections the kernel dropped because a listen queue was full.
func listenDrops(b *testing.B) int64 {
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		names := strings.Fields(sc.Text())
		if !sc.Scan() {
			break
		}
		values := strings.Fields(sc.Text())
		if len(names) == 0 || names[0] != "TcpExt:" {
			continue
		}
		for i, name := range names {
			if name == "ListenDrops" && i < len(values) {
				v, _ := strconv.ParseInt(values[i], 10, 64)
				return v
			}
		}
	}
	return 0
}
