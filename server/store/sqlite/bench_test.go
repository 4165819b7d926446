package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/storetest"
	"github.com/agentsync/agentsync/synccore"
	_ "github.com/ncruces/go-sqlite3/driver" // database/sql baseline only
)

// BenchmarkCommitCheckpoint measures one checkpoint transaction
// (storetest.BenchCommitCheckpoint), and the CPU time it takes on the
// committing thread: SQLite runs in-process. Target: ≥10,000/s.
func BenchmarkCommitCheckpoint(b *testing.B) {
	s, _ := openTest(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	storetest.BenchCommitCheckpoint(b, s)
	if cpu := threadCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "commits/cpu-s")
	}
}

// BenchmarkCommitConcurrent measures checkpoint commits of 16 sessions
// streaming at once (storetest.BenchCommitConcurrent), the load a server
// with many running turns puts on its one writer. Target: ≥10,000/s.
func BenchmarkCommitConcurrent(b *testing.B) {
	s, _ := openTest(b)
	storetest.BenchCommitConcurrent(b, s, 16)
}

// The page fixture: 100,000 messages (alternating user messages of one
// part and agent messages of five, so a page of 50 holds 150 parts), built
// once per process with a bulk insert.
const (
	fixtureMessages = 100_000
	fixtureSession  = "big"
)

var fixture struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
	for _, dir := range fixtureDirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

func pageFixture(b *testing.B) string {
	fixture.once.Do(func() {
		fixture.dir, fixture.err = os.MkdirTemp("", "store-bench-")
		if fixture.err != nil {
			return
		}
		fixture.path = filepath.Join(fixture.dir, "big.db")
		start := time.Now()
		fixture.err = buildFixture(fixture.path)
		var size int64
		if fi, err := os.Stat(fixture.path); err == nil {
			size = fi.Size()
		}
		b.Logf("fixture: %d messages, %d MB, built in %v", fixtureMessages, size>>20, time.Since(start).Round(time.Millisecond))
	})
	if fixture.err != nil {
		b.Fatal(fixture.err)
	}
	return fixture.path
}

// buildFixture bulk-inserts the fixture in one transaction, bypassing
// Commit's per-message checks (they are tested elsewhere).
func buildFixture(path string) error {
	ctx := context.Background()
	s, err := Open(ctx, path, Options{ReadConns: 1, Logger: quietLogger()})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.CreateSession(ctx, store.Session{SessionID: fixtureSession, Model: "scripted"}); err != nil {
		return err
	}
	return s.write(ctx, func(c *conn) error {
		sess, err := lookupSession(c, fixtureSession)
		if err != nil {
			return err
		}
		userParts := []synccore.Part{{PartID: "user-text:1", Sequence: 1, Type: synccore.PartText,
			Text: "Please look at the failing test and fix it."}}
		agentParts := []synccore.Part{
			{PartID: "reasoning:1", Sequence: 1, Type: synccore.PartReasoning, StepID: "step-1", State: "done",
				Text: "The user wants the test fixed; read the file first."},
			{PartID: "tool:2", Sequence: 2, Type: synccore.PartTool, StepID: "step-1", State: synccore.ToolOutputAvailable,
				ToolCallID: "call-1", ToolName: "read_file", Input: map[string]any{"path": "store_test.go"},
				Output: map[string]any{"content": strings.Repeat("line of code\n", 20)}},
			{PartID: "text:3", Sequence: 3, Type: synccore.PartText, StepID: "step-2", State: "done",
				Text: strings.Repeat("Here is what I found and changed. ", 8)},
			{PartID: "data:4", Sequence: 4, Type: synccore.PartData, StepID: "step-2", DataType: "diff-stats",
				Data: map[string]any{"added": 12, "removed": 3}},
			{PartID: "action:5", Sequence: 5, Type: synccore.PartAction, StepID: "step-2", ActionID: "a1",
				ActionType: "set_model", State: synccore.ActionCompleted, Title: "Model changed"},
		}
		encode := func(parts []synccore.Part) ([][]byte, error) {
			var out [][]byte
			for i := range parts {
				body, err := c.codec.encode(&parts[i])
				if err != nil {
					return nil, err
				}
				out = append(out, slices.Clone(body))
			}
			return out, nil
		}
		userBodies, err := encode(userParts)
		if err != nil {
			return err
		}
		agentBodies, err := encode(agentParts)
		if err != nil {
			return err
		}
		visible := int64(0)
		for seq := int64(1); seq <= fixtureMessages; seq++ {
			role, state, parts, bodies := "user", "", userParts, userBodies
			if seq%2 == 0 {
				role, state, parts, bodies = "agent", "done", agentParts, agentBodies
			}
			vis := "visible"
			if seq%10 == 5 {
				vis = "internal"
			} else {
				visible++
			}
			if err := c.exec(`INSERT INTO messages (sid, sequence, message_id, revision, role, state, turn_id,
					visibility, created_at, part_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				sess.sid, seq, fmt.Sprintf("msg-%d", seq), int64(1), role, state, fmt.Sprintf("turn-%d", (seq+1)/2),
				vis, 1_700_000_000_000+seq, len(parts)); err != nil {
				return err
			}
			for i, p := range parts {
				if err := c.exec(`INSERT INTO parts (sid, msg_sequence, sequence, part_id, body) VALUES (?, ?, ?, ?, ?)`,
					sess.sid, seq, p.Sequence, p.PartID, bodies[i]); err != nil {
					return err
				}
			}
		}
		return c.exec(`UPDATE sessions SET head_sequence = ?, visible_count = ? WHERE sid = ?`,
			int64(fixtureMessages), visible, sess.sid)
	})
}

// reportLatency reports p50 and p99 of the iterations in microseconds,
// of wall time and (if measured) of the thread's CPU time.
func reportLatency(b *testing.B, lat, cpu []time.Duration) {
	pct := func(d []time.Duration, p float64) float64 {
		return float64(d[min(len(d)-1, int(float64(len(d))*p))].Nanoseconds()) / 1e3
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(pct(lat, 0.50), "p50-µs")
		b.ReportMetric(pct(lat, 0.99), "p99-µs")
	}
	if len(cpu) > 0 && cpu[len(cpu)-1] > 0 {
		slices.Sort(cpu)
		b.ReportMetric(pct(cpu, 0.50), "p50-cpu-µs")
		b.ReportMetric(pct(cpu, 0.99), "p99-cpu-µs")
	}
}

// beforeFor spreads the pages over the whole history (deterministically),
// one in four at the head, as most reads are.
func beforeFor(rng *rand.Rand) int64 {
	if rng.IntN(4) == 0 {
		return 0
	}
	return 51 + rng.Int64N(fixtureMessages-50)
}

// BenchmarkMessagesPage50 reads pages of 50 visible messages (about 150
// parts) out of the 100,000-message fixture through Store.Messages.
// Targets: p50 ≤ 500 µs, p99 ≤ 5 ms.
func BenchmarkMessagesPage50(b *testing.B) {
	s := openFixture(b)
	benchPages(b, s)
}

// BenchmarkMessagesPage50UnderWriter is the same read while another
// goroutine commits checkpoints to a second session as fast as it can.
func BenchmarkMessagesPage50UnderWriter(b *testing.B) {
	s := openFixture(b)
	ctx, cancel := context.WithCancel(context.Background())
	// The fixture is shared: write to a session of this run only.
	id := fmt.Sprintf("w-%d", time.Now().UnixNano())
	storetest.NewSession(b, s, id)
	m := storetest.AgentMessage(id, 1, storetest.TextPart(1, "streaming", "x"))
	storetest.MustCommit(b, s, id, m)
	var wg sync.WaitGroup
	var commits atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			m.Revision++
			m.Parts = []synccore.Part{storetest.TextPart(1, "streaming", strings.Repeat("y", int(m.Revision%500)))}
			if err := s.Commit(ctx, id, []synccore.Message{m}); err != nil {
				return
			}
			commits.Add(1)
		}
	}()
	start := time.Now()
	benchPages(b, s)
	cancel()
	wg.Wait()
	b.ReportMetric(float64(commits.Load())/time.Since(start).Seconds(), "bg-commits/s")
}

func openFixture(b *testing.B) *Store {
	path := pageFixture(b)
	s, err := Open(context.Background(), path, Options{ReadConns: benchReadConns, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	// Warm up: touch every page once through the connection the pool will
	// hand out next (LIFO), so the figures are the steady state of a
	// running server. A cold first read of a random old page costs about
	// twice as much (page faults of the memory map).
	err = s.read(context.Background(), func(c *conn) error {
		st, err := c.query(`SELECT (SELECT sum(length(body)) FROM parts), (SELECT sum(part_count) FROM messages)`)
		if err != nil {
			return err
		}
		st.Step()
		return done(st)
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchPages(b *testing.B, s *Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		q := store.PageQuery{Limit: 50, BeforeSequence: beforeFor(rng)}
		t0, c0 := time.Now(), threadCPU()
		p, err := s.Messages(ctx, fixtureSession, q)
		lat = append(lat, time.Since(t0))
		cpu = append(cpu, threadCPU()-c0)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Items) != 50 {
			b.Fatalf("page of %d items", len(p.Items))
		}
	}
	b.StopTimer()
	reportLatency(b, lat, cpu)
}

// BenchmarkBaselineSelect1 is one bare read round trip through the same
// reader pool (acquire, BEGIN, SELECT 1, ROLLBACK): the floor under every
// page read.
func BenchmarkBaselineSelect1(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		err := s.read(ctx, func(c *conn) error {
			st, err := c.query(`SELECT 1`)
			if err != nil {
				return err
			}
			st.Step()
			return done(st)
		})
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportLatency(b, lat, nil)
}

// BenchmarkBaselinePage50DatabaseSQL reads the same pages through
// database/sql and the ncruces driver (same two queries, same msgpack
// decoding) for the direct-API ratio.
func BenchmarkBaselinePage50DatabaseSQL(b *testing.B) {
	path := pageFixture(b)
	db, err := sql.Open("sqlite3", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	codec := newPartCodec()
	rng := rand.New(rand.NewPCG(1, 2))
	var sid, head int64
	if err := db.QueryRowContext(ctx, `SELECT sid, head_sequence FROM sessions WHERE session_id = ?`, fixtureSession).Scan(&sid, &head); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		before := beforeFor(rng)
		if before == 0 {
			before = head + 1
		}
		t0, c0 := time.Now(), threadCPU()
		items, err := sqlPage(ctx, db, codec, sid, before)
		lat = append(lat, time.Since(t0))
		cpu = append(cpu, threadCPU()-c0)
		if err != nil {
			b.Fatal(err)
		}
		if len(items) != 50 {
			b.Fatalf("page of %d", len(items))
		}
	}
	b.StopTimer()
	reportLatency(b, lat, cpu)
}

func sqlPage(ctx context.Context, db *sql.DB, codec *partCodec, sid, before int64) ([]synccore.Message, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, pageVisibleSQL, sid, before, 51)
	if err != nil {
		return nil, err
	}
	var items []synccore.Message
	for rows.Next() {
		var m synccore.Message
		var role, state, vis string
		var parts int
		if err := rows.Scan(&m.Sequence, &m.MessageID, &m.Revision, &role, &state, &m.TurnID, &vis, &m.CreatedAt, &parts); err != nil {
			return nil, err
		}
		m.Role, m.State, m.Visibility = synccore.Role(role), synccore.MessageState(state), synccore.Visibility(vis)
		m.Parts = make([]synccore.Part, 0, parts)
		items = append(items, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	items = items[:min(len(items), 50)]
	slices.Reverse(items)
	rows, err = tx.QueryContext(ctx, `SELECT msg_sequence, body FROM parts WHERE sid = ? AND msg_sequence BETWEEN ? AND ?
		ORDER BY msg_sequence, sequence`, sid, items[0].Sequence, items[len(items)-1].Sequence)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var seq int64
		var body sql.RawBytes
		if err := rows.Scan(&seq, &body); err != nil {
			return nil, err
		}
		for i < len(items) && items[i].Sequence < seq {
			i++
		}
		if i < len(items) && items[i].Sequence == seq {
			m := &items[i]
			m.Parts = append(m.Parts, synccore.Part{})
			if err := codec.decode(body, &m.Parts[len(m.Parts)-1]); err != nil {
				return nil, err
			}
		}
	}
	return items, rows.Err()
}

var benchReadConns = 4

// fixtureDirs are other fixtures' directories, removed after the run.
var fixtureDirs []string

var searchFixture struct {
	once sync.Once
	path string
	err  error
}

// BenchmarkSearch searches the 100,000-message search fixture
// (storetest.BenchSearch): p50 and p99 of one page of 20 hits.
func BenchmarkSearch(b *testing.B) {
	searchFixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "store-search-bench-")
		if err != nil {
			searchFixture.err = err
			return
		}
		searchFixture.path = filepath.Join(dir, "search.db")
		s, err := Open(context.Background(), searchFixture.path, Options{Logger: quietLogger()})
		if err != nil {
			searchFixture.err = err
			return
		}
		storetest.BuildSearchFixture(b, s)
		searchFixture.err = s.Close()
		fixtureDirs = append(fixtureDirs, dir)
	})
	if searchFixture.err != nil {
		b.Fatal(searchFixture.err)
	}
	s, err := Open(context.Background(), searchFixture.path, Options{ReadConns: benchReadConns, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchSearch(b, s)
}
