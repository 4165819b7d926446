package sqlite

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/storetest"
)

func TestOpenCreatesDirsAndMigratesOnce(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	storetest.NewSession(t, s, "s1")
	storetest.MustCommit(t, s, "s1", storetest.UserMessage("s1", 1, "hello"))

	// Reopen the same file twice: migrations must not run again and the
	// data must still be there.
	for range 2 {
		s2, err := Open(ctx, path, Options{ReadConns: 2, Logger: quietLogger()})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		err = s2.read(ctx, func(c *conn) error {
			st, err := c.query(`SELECT count(*), max(version) FROM schema_version`)
			if err != nil {
				return err
			}
			if !st.Step() {
				t.Fatal("schema_version is empty")
			}
			if n, v := st.ColumnInt(0), st.ColumnInt(1); n != 1 || v != len(migrations) {
				t.Errorf("schema_version rows=%d version=%d, want 1 row at %d", n, v, len(migrations))
			}
			return done(st)
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s2.Messages(ctx, "s1", store.PageQuery{Limit: 50})
		if err != nil || len(p.Items) != 1 || p.Items[0].Parts[0].Text != "hello" {
			t.Fatalf("after reopen: page %+v, err %v", p, err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	if err := s.write(ctx, func(c *conn) error {
		return c.exec(`UPDATE schema_version SET version = ?`, len(migrations)+1)
	}); err != nil {
		t.Fatal(err)
	}
	if s2, err := Open(ctx, path, Options{Logger: quietLogger()}); err == nil {
		s2.Close()
		t.Fatal("Open accepted a schema newer than the binary")
	}
}

func TestPragmas(t *testing.T) {
	s, _ := openTest(t)
	err := s.read(context.Background(), func(c *conn) error {
		for pragma, want := range map[string]string{
			"journal_mode": "wal", "foreign_keys": "1", "synchronous": "1", "busy_timeout": "5000",
			"query_only": "1", "mmap_size": "268435456",
		} {
			st, err := c.query(`PRAGMA ` + pragma)
			if err != nil {
				return err
			}
			st.Step()
			if got := st.ColumnText(0); got != want {
				t.Errorf("PRAGMA %s = %q, want %q", pragma, got, want)
			}
			if err := done(st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestClosedStore(t *testing.T) {
	s, _ := openTest(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Session(context.Background(), "x")
	storetest.WantCode(t, err, "closed")
	storetest.WantCode(t, s.CreateSession(context.Background(), store.Session{SessionID: "x"}), "closed")
}
