package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// panicky is a Manager whose ListOwnedSessions has a bug. Only the panic path
// is under test here; every other method belongs to the real engine and
// is exercised end to end in server/e2e.
type panicky struct{ Manager }

func (panicky) ListOwnedSessions(context.Context, string, int) ([]store.Session, error) {
	panic("bug in the engine")
}

func TestPanicIsRecovered(t *testing.T) {
	var logs bytes.Buffer
	h := New(Config{Manager: panicky{}, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e synccore.Error
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 500 || e.Code != synccore.CodeInternal || strings.Contains(e.Message, "bug") {
		t.Fatalf("panic answered %d %+v (the panic value must not leak)", resp.StatusCode, e)
	}
	if !strings.Contains(logs.String(), "bug in the engine") || !strings.Contains(logs.String(), "status=500") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
	// The server keeps serving.
	resp2, err := http.Get(srv.URL + "/healthz")
	if err != nil || resp2.StatusCode != 200 {
		t.Fatalf("after a panic: %v %v", err, resp2)
	}
	resp2.Body.Close()
}
