package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/server/blob/pgblob"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/internal/pgtest"
	"github.com/agentsync/agentsync/server/store/postgres"
	"github.com/agentsync/agentsync/synccore"
)

// cluster is the throwaway PostgreSQL server for -store.
var cluster *pgtest.Cluster

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &cluster)) }

// With -store postgres://..., a turn runs and lands in PostgreSQL: the
// answer is read back through a PostgreSQL store after the server stopped.
// With -node as well, the node takes the session's lease to serve it.
func TestRunOnPostgres(t *testing.T) {
	t.Run("one node", func(t *testing.T) { runOnPostgres(t) })
	t.Run("-node", func(t *testing.T) { runOnPostgres(t, "-node", "a", "-lease-ttl", "2s") })
	t.Run("-nats", func(t *testing.T) {
		ns := natstest.Start(t)
		runOnPostgres(t, "-node", "a", "-nats", ns.URL())
	})
}

func runOnPostgres(t *testing.T, flags ...string) {
	url := cluster.Database(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineWriter{urls: make(chan string, 1)}
	errc := make(chan error, 1)
	db := filepath.Join(t.TempDir(), "unused.db")
	go func() {
		errc <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-store", url, "-db", db, "-speed", "0", "-log-level", "error"}, flags...), out)
	}()
	var base string
	select {
	case base = <-out.urls:
	case err := <-errc:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line")
	}
	post := func(path, body string, into any) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		if into != nil {
			if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
				t.Fatal(err)
			}
		}
	}
	var sess struct {
		SessionID string `json:"session_id"`
	}
	post("/v1/sessions", `{}`, &sess)
	post("/v1/sessions/"+sess.SessionID+"/messages", `{"parts":[{"type":"text","text":"hello from postgres"}]}`, nil)

	// The scripted answer streams at full speed; wait until it is done.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/v1/sessions/" + sess.SessionID + "/messages?limit=10")
		if err != nil {
			t.Fatal(err)
		}
		var page synccore.MessagePage
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(page.Items); n == 2 && page.Items[1].State == synccore.MessageDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answer did not finish: %+v", page)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// With -store, files go to the same database (-files postgres).
	a := &bindings.API{BaseURL: base, HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	text := []byte("a file in postgres")
	f, err := a.Upload(ctx, sess.SessionID, bindings.UploadFile{Name: "p.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text))})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if resp, err := http.Get(base + f.URL); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %v %v", f.URL, resp, err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != string(text) {
			t.Fatalf("GET %s: %q", f.URL, b)
		}
	}
	pb, err := pgblob.Open(context.Background(), url, pgblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pb.Lookup(context.Background(), sess.SessionID, f.BlobID); err != nil {
		t.Fatalf("the file is not in the database: %v", err)
	}
	pb.Close()
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the SQLite file was created with -store set (%v)", err)
	}

	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hist, err := st.History(context.Background(), sess.SessionID)
	if err != nil || len(hist) != 2 || hist[0].Parts[0].Text != "hello from postgres" ||
		hist[1].Role != synccore.RoleAgent || hist[1].State != synccore.MessageDone || len(hist[1].Parts) == 0 {
		t.Fatalf("history in PostgreSQL: %+v, %v", hist, err)
	}
}

func TestRunStoreFlagErrors(t *testing.T) {
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-store", "mysql://x", "-log-level", "error"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-store") {
		t.Fatalf("-store mysql://x: %v", err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-store", "postgres://postgres@127.0.0.1:1/none?connect_timeout=2",
		"-log-level", "error"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("-store to a closed port: %v", err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-node", "a", "-log-level", "error"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-node needs -store") {
		t.Fatalf("-node on SQLite: %v", err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-store", "postgres://x", "-node", "a", "-lease-ttl", "0s",
		"-log-level", "error"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-lease-ttl") {
		t.Fatalf("-lease-ttl 0: %v", err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-store", "postgres://x", "-nats", "nats://127.0.0.1:1",
		"-log-level", "error"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-nats needs -node") {
		t.Fatalf("-nats without -node: %v", err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-store", "postgres://x", "-node", "a", "-nats", "nats://127.0.0.1:1",
		"-log-level", "error"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-nats: connect") {
		t.Fatalf("-nats to a closed port: %v", err)
	}
}
