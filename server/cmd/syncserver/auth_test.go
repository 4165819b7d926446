package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The JWT secret from the environment turns on per-user access: each sub
// sees its own sessions only.
func TestRunWithJWTSecretFromEnv(t *testing.T) {
	secret := "a secret from the environment, 32+ bytes"
	t.Setenv(jwtSecretEnv, secret)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineWriter{urls: make(chan string, 1)}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "t.db"), "-log-level", "error"}, out)
	}()
	var url string
	select {
	case url = <-out.urls:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line")
	}
	bearer := func(sub string) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Minute).Unix()}).SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + tok
	}
	call := func(method, path, auth string, out any) int {
		req, _ := http.NewRequest(method, url+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	var sess struct {
		SessionID string `json:"session_id"`
	}
	if st := call("POST", "/v1/sessions", bearer("alice"), &sess); st != 201 || sess.SessionID == "" {
		t.Fatalf("alice creates a session: %d %+v", st, sess)
	}
	if st := call("GET", "/v1/sessions/"+sess.SessionID+"/messages", bearer("alice"), nil); st != 200 {
		t.Fatalf("alice reads her session: %d", st)
	}
	if st := call("GET", "/v1/sessions/"+sess.SessionID+"/messages", bearer("bob"), nil); st != 404 {
		t.Fatalf("bob reads alice's session: %d, want 404", st)
	}
	if st := call("GET", "/v1/sessions", "", nil); st != 401 {
		t.Fatalf("no token: %d, want 401", st)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}
