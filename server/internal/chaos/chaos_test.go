package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/store/postgres"
	"github.com/agentsync/agentsync/synccore"
)

// The nodes' lease: short, so that a run is short; the bounds below are
// in its units.
const lease = 2 * time.Second

// The answer every run streams while the fault hits: 8,000 characters in
// 2,000 deltas of 2 ms, about 4 s.
const (
	longAnswer = "scenario:text chars=8000 delta=4"
	streamTime = 4 * time.Second
)

// settleBound is the promise under test: every message that was
// streaming when a fault began is done within this long after the fault
// ended. A dead or stalled owner's lease lapses within one TTL of its last
// renewal, a sweep of another node's orphan keeper (every TTL/3) takes
// the session and closes the message; a message whose owner lived streams
// to its end. Two TTLs plus the stream's length bound both; the margin is
// for a loaded machine (42 runs with five other test processes on the 2
// cores settled within 8.5 s at most).
const settleBound = 2*lease + streamTime + 4*time.Second

// fault is one kind of failure a run injects; inject returns once the
// fault is over (a paused node resumed, NATS back), with the node it hit.
type fault struct {
	name   string
	victim func(r *run) *node // nil: the fault hits no node in particular
	inject func(r *run, victim *node)
}

// hitsOwner says the fault hits the long answer's owner, which another
// node may then take the session from.
func (f fault) hitsOwner() bool { return f.name != "kill-other" && f.victim != nil }

var faults = []fault{
	{"kill-owner", owner, func(r *run, n *node) { r.kill(n) }},
	{"kill-other", other, func(r *run, n *node) { r.kill(n) }},
	{"pause-past-lease", owner, func(r *run, n *node) { r.pause(n, lease+time.Second) }},
	{"pause-under-lease", owner, func(r *run, n *node) { r.pause(n, lease/2) }},
	{"nats-restart", nil, func(r *run, _ *node) { r.nats.Restart(r.t, time.Second) }},
	{"nats-cut-owner", owner, func(r *run, n *node) { n.link.partition(lease + time.Second); time.Sleep(lease + time.Second) }},
	{"postgres-restart", nil, func(r *run, _ *node) {
		if err := pg.Restart(context.Background(), time.Second); err != nil {
			r.t.Fatal(err)
		}
	}},
}

func owner(r *run) *node { return r.nodes[r.ownerIdx] }
func other(r *run) *node { return r.nodes[(r.ownerIdx+1+r.rng.IntN(2))%3] }

// TestChaos plays each fault once (a few minutes at most); with
// AGENTSYNC_CHAOS_RUNS=N it plays N runs of faults chosen at random, from
// AGENTSYNC_CHAOS_SEED when set.
func TestChaos(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTSYNC_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("AGENTSYNC_CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("AGENTSYNC_CHAOS_SEED=%d replays this sequence", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	plan := slices.Clone(faults)
	if s := os.Getenv("AGENTSYNC_CHAOS_FAULTS"); s != "" {
		plan = slices.DeleteFunc(plan, func(f fault) bool { return !slices.Contains(strings.Split(s, ","), f.name) })
	}
	if s := os.Getenv("AGENTSYNC_CHAOS_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("AGENTSYNC_CHAOS_RUNS=%q: want a positive number", s)
		}
		kinds := slices.Clone(plan)
		plan = plan[:0]
		for range n {
			plan = append(plan, kinds[rng.IntN(len(kinds))])
		}
	}
	rt, err := core.NewRuntime(context.Background(), core.RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())

	var mu sync.Mutex
	passed, played := map[string]int{}, map[string]int{}
	var takeovers, settles = map[string][]time.Duration{}, []time.Duration{}
	for i, f := range plan {
		runSeed := rng.Uint64()
		ok := t.Run(fmt.Sprintf("%02d-%s", i, f.name), func(t *testing.T) {
			res := play(t, f, runSeed, rt)
			mu.Lock()
			defer mu.Unlock()
			settles = append(settles, res.settled)
			if res.takeover > 0 {
				takeovers[f.name] = append(takeovers[f.name], res.takeover)
			}
		})
		played[f.name]++
		if ok {
			passed[f.name]++
		}
	}
	var b strings.Builder
	for _, f := range faults {
		if played[f.name] == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  %-18s %d/%d passed", f.name, passed[f.name], played[f.name])
		if d := takeovers[f.name]; len(d) > 0 {
			fmt.Fprintf(&b, ", takeover p50 %s max %s (%d taken over)", p50(d), slices.Max(d), len(d))
		}
	}
	if len(settles) > 0 {
		fmt.Fprintf(&b, "\n  every streaming message done within p50 %s max %s of the fault's end (bound %s)",
			p50(settles), slices.Max(settles), settleBound)
	}
	t.Logf("chaos, lease %s:%s", lease, b.String())
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(10 * time.Millisecond)
}

// run is one chaos run: its cluster, sessions and clients.
type run struct {
	t        *testing.T
	rng      *rand.Rand
	db       string
	nats     *natstest.Server
	nodes    []*node
	lb       *proxy
	st       *postgres.Store
	api      *bindings.API // through the load balancer
	ownerIdx int           // the node that serves the long answer's session
	dead     map[*node]bool
}

type result struct {
	takeover time.Duration // from the fault's start to another node holding the lease; 0: none did
	settled  time.Duration // from the fault's end until no message streamed
}

func play(t *testing.T, f fault, seed uint64, rt *core.Runtime) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := &run{t: t, rng: rand.New(rand.NewPCG(seed, 2)), db: pg.Database(t), nats: natstest.Start(t), dead: map[*node]bool{}}
	natsAddr := strings.TrimPrefix(r.nats.URL(), "nats://")
	var addrs []string
	for _, name := range []string{"a", "b", "c"} {
		n := startNode(t, name, r.db, newProxy(t, seed, natsAddr), lease)
		r.nodes = append(r.nodes, n)
		addrs = append(addrs, n.addr)
	}
	r.lb = newProxy(t, seed, addrs...)
	r.api = &bindings.API{BaseURL: "http://" + r.lb.addr()}
	st, err := postgres.Open(ctx, r.db, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r.st = st

	// Two sessions: the long answer on the owner, and an approval on any
	// node, answered through the load balancer once the fault began.
	r.ownerIdx = r.rng.IntN(3)
	var victim *node
	if f.victim != nil {
		victim = f.victim(r)
	}
	long, approval := r.createSession(ctx), r.createSession(ctx)
	sessions := []string{long, approval}

	// Three viewers of each: the Go host under wazero through the load
	// balancer, the Go host on the native core on one node (never one
	// that is killed), the JavaScript host in Node through the balancer.
	cutting := make(chan struct{})
	var clients []client
	for _, sid := range sessions {
		lbURL := "http://" + r.lb.addr()
		pinned := r.nodes[r.rng.IntN(3)]
		for strings.HasPrefix(f.name, "kill") && pinned == victim {
			pinned = r.nodes[r.rng.IntN(3)]
		}
		pin := newProxy(t, seed, pinned.addr)
		pin.cutEvery(cutting, 900*time.Millisecond)
		clients = append(clients,
			dialGo(t, "go-wasm/"+sid[:8], lbURL, sid, rt),
			dialGo(t, "go-native@"+pinned.name+"/"+sid[:8], "http://"+pin.addr(), sid, nil),
			startNodeClient(t, "js/"+sid[:8], lbURL, sid))
	}
	r.lb.cutEvery(cutting, 700*time.Millisecond)

	r.post(ctx, r.nodes[r.ownerIdx], long, longAnswer)
	r.post(ctx, r.nodes[r.rng.IntN(3)], approval, "scenario:approval")
	r.waitStreaming(ctx, long)
	time.Sleep(time.Duration(r.rng.Int64N(int64(500 * time.Millisecond))))

	faultAt := time.Now()
	var res result
	took, settled := make(chan time.Duration, 1), make(chan struct{})
	if f.hitsOwner() {
		go func() { took <- r.watchTakeover(ctx, long, victim.name, faultAt, settled) }()
	} else {
		took <- 0
	}
	answered := make(chan error, 1)
	go func() { answered <- r.answerApproval(ctx, approval) }()
	f.inject(r, victim)
	ended := time.Now()
	t.Logf("%s on %v at %s, over after %s", f.name, nameOf(victim), faultAt.Format("15:04:05.000"), ended.Sub(faultAt).Round(time.Millisecond))

	res.settled = r.waitSettled(ctx, sessions, ended)
	close(settled)
	if err := <-answered; err != nil {
		t.Error(err)
	}
	res.takeover = <-took
	if res.takeover > 0 {
		t.Logf("the lease of the long answer's session moved off %s %s after the fault began", victim.name, res.takeover.Round(time.Millisecond))
	}

	// Nothing is wedged: a new message in each session gets its answer.
	for _, sid := range sessions {
		before := len(r.history(ctx, sid))
		r.postThroughBalancer(ctx, sid, "scenario:text chars=200 delta=10")
		r.waitAnswered(ctx, sid, before+2)
	}
	close(cutting)
	t.Logf("settled %s after the fault, follow-ups answered %s after it", res.settled.Round(time.Millisecond), time.Since(ended).Round(time.Millisecond))
	converging := time.Now()
	defer func() { t.Logf("clients converged in %s", time.Since(converging).Round(time.Millisecond)) }()

	for _, sid := range sessions {
		want, hist := r.storeDigest(ctx, sid)
		for _, c := range clients {
			if !strings.HasSuffix(c.name(), sid[:8]) {
				continue
			}
			cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
			if err := c.converge(cctx, want); err != nil {
				t.Error(err)
			}
			ccancel()
			seen, changed := c.doneSeen()
			for _, c := range changed {
				t.Error(c)
			}
			for id, d := range seen {
				if got := messageDigest(hist, id); got != d {
					t.Errorf("%s saw message %s done, and the store holds another", c.name(), id)
					if g, ok := c.(*goClient); ok {
						js, _ := json.Marshal(g.doneMsg[id])
						t.Logf("seen: %s", js)
						for _, m := range hist {
							if m.MessageID == id {
								js, _ := json.Marshal(m)
								t.Logf("store: %s", js)
							}
						}
					}
				}
			}
		}
	}
	return res
}

func nameOf(n *node) string {
	if n == nil {
		return "the cluster"
	}
	return "node " + n.name
}

func (r *run) kill(n *node) {
	n.signal(r.t, syscall.SIGKILL)
	r.lb.markDown(n.addr)
	r.dead[n] = true
}

func (r *run) pause(n *node, d time.Duration) {
	n.signal(r.t, syscall.SIGSTOP)
	time.Sleep(d)
	n.signal(r.t, syscall.SIGCONT)
}

// createSession creates a session through the load balancer, trying
// again when the balancer cut the request.
func (r *run) createSession(ctx context.Context) string {
	for {
		s, err := r.api.CreateSession(ctx, "")
		if err == nil {
			return s.SessionID
		}
		if ctx.Err() != nil {
			r.t.Fatalf("create a session: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// post posts text to sid on node n directly (so n serves the session).
func (r *run) post(ctx context.Context, n *node, sid, text string) {
	api := &bindings.API{BaseURL: n.url()}
	if _, err := api.Send(ctx, sid, synccore.Part{Type: synccore.PartText, Text: text}); err != nil {
		r.t.Fatalf("post to %s: %v", n.name, err)
	}
}

// postThroughBalancer posts as an app would: through the balancer, the
// host's own retries, and again after a cut. A conflict is a bug: a
// client cannot act on it.
func (r *run) postThroughBalancer(ctx context.Context, sid, text string) {
	opts := bindings.SendOptions{IdempotencyKey: fmt.Sprintf("chaos-%x", r.rng.Uint64())}
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		_, err := r.api.SendWith(ctx, sid, []synccore.Part{{Type: synccore.PartText, Text: text}}, opts)
		if err == nil {
			return
		}
		r.t.Logf("post to %s through the balancer, after %s: %v", sid[:8], time.Since(start).Round(time.Millisecond), err)
		if errors.Is(err, synccore.ErrConflict) || time.Now().After(deadline) {
			r.t.Fatalf("post to %s through the balancer: %v", sid, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// answerApproval approves the session's pending interaction through the
// balancer, as often as it takes, until the session has no pending
// interaction and its last message is done. An interaction that a
// takeover closed (its turn interrupted) needs no answer.
func (r *run) answerApproval(ctx context.Context, sid string) error {
	for ctx.Err() == nil {
		hist, err := r.st.History(ctx, sid)
		if err == nil && len(hist) > 0 {
			last := hist[len(hist)-1]
			id := pendingInteraction(last)
			if id == "" && last.Role == synccore.RoleAgent && last.State == synccore.MessageDone {
				return nil
			}
			if id != "" {
				_, err := r.api.Answer(ctx, sid, id, bindings.Approval(true))
				if errors.Is(err, synccore.ErrConflict) {
					return fmt.Errorf("answer %s: a conflict no client can act on: %v", id, err)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the approval of %s was never settled: %v", sid, ctx.Err())
}

func pendingInteraction(m synccore.Message) string {
	for _, p := range m.Parts {
		if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
			return p.InteractionID
		}
	}
	return ""
}

func (r *run) history(ctx context.Context, sid string) []synccore.Message {
	hist, err := r.st.History(ctx, sid)
	if err != nil {
		r.t.Fatal(err)
	}
	return hist
}

// waitAnswered waits until sid holds count messages, the last an agent's
// and done.
func (r *run) waitAnswered(ctx context.Context, sid string, count int) {
	deadline := time.Now().Add(settleBound)
	for {
		hist, err := r.st.History(ctx, sid)
		if err == nil && len(hist) == count {
			if last := hist[count-1]; last.Role == synccore.RoleAgent && last.State == synccore.MessageDone {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s was not answered within %s: %s", sid, settleBound, summary(hist))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStreaming waits until sid's agent message streams text.
func (r *run) waitStreaming(ctx context.Context, sid string) {
	for ctx.Err() == nil {
		hist, err := r.st.History(ctx, sid)
		if err == nil && len(hist) == 2 && hist[1].State == synccore.MessageStreaming {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("%s never streamed", sid)
}

// watchTakeover reports how long after since another node than from held
// sid's lease, or 0 if none did before stop was closed.
func (r *run) watchTakeover(ctx context.Context, sid, from string, since time.Time, stop <-chan struct{}) time.Duration {
	for ctx.Err() == nil {
		conn, err := pgx.Connect(ctx, r.db)
		if err == nil {
			var holder string
			err = conn.QueryRow(ctx, `SELECT lease_node FROM sessions WHERE session_id = $1`, sid).Scan(&holder)
			conn.Close(ctx)
			if err == nil && holder != "" && holder != from {
				return time.Since(since)
			}
		}
		select {
		case <-stop:
			return 0
		case <-time.After(25 * time.Millisecond):
		}
	}
	return 0
}

// waitSettled waits until no message of sessions streams and returns how
// long after since that was, failing the run past settleBound.
func (r *run) waitSettled(ctx context.Context, sessions []string, since time.Time) time.Duration {
	deadline := since.Add(settleBound)
	for {
		streaming := ""
		for _, sid := range sessions {
			hist, err := r.st.History(ctx, sid)
			if err != nil {
				streaming = "unread: " + err.Error()
				break
			}
			if s := summary(hist); strings.Contains(s, "streaming") {
				streaming = sid + " " + s
				break
			}
		}
		if streaming == "" {
			return time.Since(since)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("a message still streams %s after the fault ended (bound %s): %s",
				time.Since(since).Round(time.Millisecond), settleBound, streaming)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func summary(hist []synccore.Message) string {
	var parts []string
	for _, m := range hist {
		parts = append(parts, fmt.Sprintf("%d:%s:%s:r%d:%dparts", m.Sequence, m.Role, m.State, m.Revision, len(m.Parts)))
	}
	return strings.Join(parts, " ")
}

// storeDigest is the digest of sid's visible messages as the store holds
// them: what every client's view must equal.
func (r *run) storeDigest(ctx context.Context, sid string) (string, []synccore.Message) {
	hist, err := r.st.History(ctx, sid)
	if err != nil {
		r.t.Fatal(err)
	}
	visible := hist[:0:0]
	for _, m := range hist {
		if m.Visibility != synccore.VisibilityInternal {
			visible = append(visible, m)
		}
	}
	return wire.DigestMessages(visible), hist
}

func messageDigest(hist []synccore.Message, id string) string {
	for _, m := range hist {
		if m.MessageID == id {
			return wire.DigestMessages([]synccore.Message{m})
		}
	}
	return ""
}
