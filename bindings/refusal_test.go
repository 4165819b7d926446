package bindings

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/synccore"
)

// An answer or an action refused for now (503 closed with Retry-After, as a
// node that lost the session answers) is sent again and served; one whose
// answer was lost (the connection cut) is not sent again, since it may have
// been served.
func TestAnswerAndActionRetryRefusalsOnly(t *testing.T) {
	var calls atomic.Int64
	var cut atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case cut.Load():
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
		case n == 1:
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"closed","message":"node \"a\" cannot tell who serves the session right now; retry"}`))
		default:
			w.Header().Set("Content-Type", contentMsgpack)
			_ = msgpack.NewEncoder(w).Encode(synccore.Message{MessageID: "msg_1", Role: synccore.RoleAgent})
		}
	}))
	t.Cleanup(srv.Close)
	api := &API{BaseURL: srv.URL}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	m, err := api.Answer(ctx, "ses_1", "int_1", Approval(true))
	if err != nil || m.MessageID != "msg_1" || calls.Load() != 2 {
		t.Fatalf("answer after a 503: %+v, %v, %d calls", m, err, calls.Load())
	}
	calls.Store(0)
	if m, err := api.Action(ctx, "ses_1", ActionStop, ""); err != nil || m.MessageID != "msg_1" || calls.Load() != 2 {
		t.Fatalf("action after a 503: %+v, %v, %d calls", m, err, calls.Load())
	}

	calls.Store(0)
	cut.Store(true)
	_, err = api.Answer(ctx, "ses_1", "int_1", Approval(true))
	var te *NetworkError
	if !errors.As(err, &te) || calls.Load() != 1 {
		t.Fatalf("answer whose connection was cut: %v after %d calls, want one transport error", err, calls.Load())
	}
}
