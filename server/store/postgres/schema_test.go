package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/storetest"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The database refuses, on its own, the writes that break the rules: raw
// SQL that skips the store's checks hits the schema's triggers and keys.
func TestDatabaseEnforcesTheRules(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t)
	storetest.NewSession(t, s, "s")
	agent := storetest.AgentMessage("s", 2, storetest.TextPart(1, "streaming", "x"))
	storetest.MustCommit(t, s, "s", storetest.UserMessage("s", 1, "go"), agent)

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var sid int64
	if err := conn.QueryRow(ctx, `SELECT sid FROM sessions WHERE session_id = 's'`).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO messages (sid, sequence, message_id, revision, role, state, turn_id, visibility, created_at, part_count)
		VALUES ($1, $2, $3, $4, 'user', '', 't', 'visible', 1, 0)`
	for _, c := range []struct {
		name, sql string
		args      []any
	}{
		{"a gap in the sequence", insert, []any{sid, 4, "gap", 1}},
		{"a new message at revision 2", insert, []any{sid, 3, "rev2", 2}},
		{"a revision that skips", `UPDATE messages SET revision = revision + 2 WHERE sid = $1 AND sequence = 2`, []any{sid}},
		{"a revision that goes back", `UPDATE messages SET revision = revision - 1 WHERE sid = $1 AND sequence = 2`, []any{sid}},
		{"a done message changed", `UPDATE messages SET revision = revision + 1 WHERE sid = $1 AND sequence = 1`, []any{sid}},
		{"a moved message", `UPDATE messages SET revision = revision + 1, sequence = 9 WHERE sid = $1 AND sequence = 2`, []any{sid}},
		{"a part that changes its id", `UPDATE parts SET part_id = 'other' WHERE sid = $1 AND msg_sequence = 2`, []any{sid}},
		{"a repeated part id", `INSERT INTO parts (sid, msg_sequence, sequence, part_id, body) VALUES ($1, 2, 2, 'text:1', '\x80')`, []any{sid}},
	} {
		_, err := conn.Exec(ctx, c.sql, c.args...)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || (pe.Code != "23514" && pe.Code != "23505") {
			t.Errorf("%s: the database accepted it or failed otherwise: %v", c.name, err)
		}
	}
	// Nothing of it landed: the store reads what it committed.
	p, err := s.Messages(ctx, "s", store.PageQuery{Limit: 10, IncludeInternal: true})
	if err != nil || p.Total != 2 || p.Items[1].Revision != 1 || p.Items[1].Parts[0].PartID != "text:1" {
		t.Fatalf("after refused writes: %+v, %v", p, err)
	}
	// And the trigger's refusal reaches a caller as a typed conflict.
	_, err = conn.Exec(ctx, insert, sid, 7, "gap", 1)
	storetest.WantCode(t, s.typed(ctx, err), synccore.CodeConflict)
}

// Nodes that start together migrate the schema once: each Open waits its
// turn on the advisory lock, and a reopen applies nothing.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	url := cluster.Database(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := Open(context.Background(), url, Options{Logger: quietLogger()})
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := openAt(t, url)
	var version, rows int
	if err := s.pool.QueryRow(context.Background(), `SELECT max(version), count(*) FROM schema_version`).Scan(&version, &rows); err != nil {
		t.Fatal(err)
	}
	if version != len(migrations) || rows != 1 {
		t.Fatalf("schema_version holds %d rows, version %d; want one row, %d", rows, version, len(migrations))
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	s, url := openTest(t)
	if _, err := s.pool.Exec(context.Background(), `UPDATE schema_version SET version = 999`); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), url, Options{Logger: quietLogger()})
	if err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("Open on a newer schema: %v", err)
	}
}

func TestClosedStore(t *testing.T) {
	s, _ := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Session(context.Background(), "x")
	storetest.WantCode(t, err, synccore.CodeClosed)
	storetest.WantCode(t, s.CreateSession(context.Background(), store.Session{SessionID: "x"}), synccore.CodeClosed)
}

// Fencing is the database's too: raw SQL that writes a leased session's
// messages at any epoch but the session's is refused by the triggers.
func TestDatabaseFencesStaleEpochs(t *testing.T) {
	ctx := context.Background()
	s, url := openTest(t)
	storetest.NewSession(t, s, "s")
	stale, err := s.AcquireLease(ctx, "s", "a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseLease(ctx, stale); err != nil {
		t.Fatal(err)
	}
	current, err := s.AcquireLease(ctx, "s", "b", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	insertAt := func(epoch string) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if epoch != "" {
				if _, err := tx.Exec(ctx, `SELECT set_config('agentsync.lease_epoch', $1, true)`, epoch); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO messages (sid, sequence, message_id, revision, role, state, turn_id,
				visibility, created_at, part_count)
				SELECT sid, 1, 'm', 1, 'user', '', 't', 'visible', 1, 0 FROM sessions WHERE session_id = 's'`)
			return err
		})
	}
	for _, epoch := range []string{"", "0", strconv.FormatInt(stale.Epoch, 10)} {
		err := insertAt(epoch)
		if !errors.Is(s.typed(ctx, err), store.ErrLeaseLost) {
			t.Errorf("a write at epoch %q to a session at epoch %d: %v, want fenced", epoch, current.Epoch, err)
		}
	}
	if err := insertAt(strconv.FormatInt(current.Epoch, 10)); err != nil {
		t.Fatalf("a write at the current epoch: %v", err)
	}
}
