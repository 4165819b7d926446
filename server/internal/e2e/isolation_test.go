package e2e

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/synccore"
)

var isolationSecret = []byte("isolation suite secret, 32+ bytes long")

func userToken(t *testing.T, sub string) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": sub, "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString(isolationSecret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// lockedBuffer is a log sink the server writes from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestIsolation: two principals (JWT subs) on one server, each trying
// every endpoint and the WebSocket on the other's session. Every attempt
// answers exactly as an unknown id would (404 not_found, same message),
// nothing of the session is readable, and nothing in it changes.
func TestIsolation(t *testing.T) {
	jwtAuth, err := auth.JWT(auth.JWTConfig{Secret: isolationSecret})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	srv := newServer(t, serverOpts{
		Authorizer: jwtAuth,
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	aliceTok, bobTok := userToken(t, "alice"), userToken(t, "bob")
	alice, bob := srv.as(aliceTok), srv.as(bobTok)

	a := alice.createSession()
	alice.say(a, "hello")
	alice.waitIdle(a, 2)
	before := alice.all(a, true)
	alice.do("PATCH", "/v1/sessions/"+a, map[string]any{"title": "alice's"}).expect(t, http.StatusOK, nil)
	b := bob.createSession()

	// Listings hold one's own sessions only.
	for _, c := range []struct {
		who  *testServer
		want string
	}{{alice, a}, {bob, b}} {
		var list struct{ Items []sessionBody }
		c.who.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
		if len(list.Items) != 1 || list.Items[0].SessionID != c.want {
			t.Fatalf("listing %+v, want only %s", list.Items, c.want)
		}
	}

	// Every endpoint on the other's id, and on an id that does not exist:
	// the answers must be the same but for the id.
	attempts := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/sessions/{id}/messages", nil},
		{"GET", "/v1/sessions/{id}/messages?include_internal=true&limit=200", nil},
		{"POST", "/v1/sessions/{id}/messages", textParts("I am not alice")},
		{"POST", "/v1/sessions/{id}/interactions/int_x", map[string]any{"response": map[string]any{"approved": true}}},
		{"POST", "/v1/sessions/{id}/actions", map[string]any{"action_type": "stop"}},
		{"POST", "/v1/sessions/{id}/actions", map[string]any{"action_type": "retry"}},
		{"PATCH", "/v1/sessions/{id}", map[string]any{"title": "mine now"}},
		{"DELETE", "/v1/sessions/{id}", nil},
		{"POST", "/v1/sessions/{id}/fork", map[string]any{"before_sequence": 2}},
		{"POST", "/v1/sessions/{id}/fork", map[string]any{"before_sequence": 2, "regenerate": true}},
		{"GET", "/v1/sessions/{id}/branches?sequence=1", nil},
		{"GET", "/v1/sessions/{id}/alternatives", nil},
		{"GET", "/v1/chat/{id}/stream", nil},
		{"POST", "/v1/chat", map[string]any{"id": "{id}", "messages": []map[string]any{{"id": "m1", "role": "user", "parts": []map[string]any{{"type": "text", "text": "hi"}}}}}},
	}
	const unknown = "ses_doesnotexist"
	for _, intruder := range []struct {
		who    *testServer
		victim string
	}{{bob, a}, {alice, b}} {
		for _, at := range attempts {
			send := func(id string) synccore.Error {
				path := strings.ReplaceAll(at.path, "{id}", id)
				body := at.body
				if m, ok := body.(map[string]any); ok && m["id"] == "{id}" {
					body = map[string]any{"id": id, "messages": m["messages"]}
				}
				return intruder.who.do(at.method, path, body).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
			}
			got, ref := send(intruder.victim), send(unknown)
			if strings.ReplaceAll(got.Message, intruder.victim, unknown) != ref.Message {
				t.Errorf("%s %s: message %q tells the id apart from an unknown one (%q)", at.method, at.path, got.Message, ref.Message)
			}
		}
		// The WebSocket, with the header and with ?token=.
		for _, viaQuery := range []bool{false, true} {
			url, h := intruder.who.wsURL(intruder.victim), http.Header{}
			if viaQuery {
				url += "?token=" + intruder.who.token
			} else {
				h.Set("Authorization", "Bearer "+intruder.who.token)
			}
			c, resp, err := websocket.DefaultDialer.Dial(url, h)
			if err == nil {
				c.Close()
				t.Fatalf("subscribed to another principal's session (query token %v)", viaQuery)
			}
			if resp == nil || resp.StatusCode != http.StatusNotFound {
				t.Fatalf("subscribe to another's session: %v, want a 404 answer", err)
			}
		}
	}

	// Nothing changed: alice's session reads back the same, title included,
	// and bob's is still empty.
	after := alice.all(a, true)
	if wire.DigestMessages(after) != wire.DigestMessages(before) {
		t.Fatalf("alice's session changed: %s -> %s", summary(before), summary(after))
	}
	var list struct{ Items []sessionBody }
	alice.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0].Title != "alice's" {
		t.Fatalf("alice's session after the attempts: %+v", list.Items)
	}
	if msgs := bob.all(b, true); len(msgs) != 0 {
		t.Fatalf("bob's session got messages: %s", summary(msgs))
	}

	// Each still uses its own session, the browser way too (?token=).
	ws, _, err := websocket.DefaultDialer.Dial(alice.wsURL(a)+"?token="+aliceTok, nil)
	if err != nil {
		t.Fatalf("alice subscribes with ?token=: %v", err)
	}
	wc := &wsClient{t: t, c: ws}
	frames, err := wc.read(5 * time.Second)
	ws.Close()
	if err != nil || len(frames) == 0 || frames[0].Kind != synccore.FrameHello || frames[0].HeadSequence != before[len(before)-1].Sequence {
		t.Fatalf("alice's subscription: %+v, %v", frames, err)
	}
	bob.say(b, "bob here")
	bob.waitIdle(b, 2)

	// No or bad credentials: 401 everywhere, the WebSocket included.
	for _, tok := range []string{"", "garbage", aliceTok[:len(aliceTok)-4] + "AAAA"} {
		anon := srv.as(tok)
		for _, at := range [][2]string{{"GET", "/v1/sessions"}, {"POST", "/v1/sessions"}, {"GET", "/v1/sessions/" + a + "/messages"}, {"GET", "/v1/chat/" + a + "/stream"}} {
			anon.do(at[0], at[1], nil).expectError(t, http.StatusUnauthorized, synccore.CodeUnauthorized)
		}
		_, resp, err := websocket.DefaultDialer.Dial(srv.wsURL(a)+"?token="+tok, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("subscribe with token %q: %v, want 401", tok, err)
		}
	}

	// A fork belongs to its parent's principal.
	var fork sessionBody
	alice.do("POST", "/v1/sessions/"+a+"/fork", map[string]any{"before_sequence": 2}).expect(t, http.StatusCreated, &fork)
	bob.do("GET", "/v1/sessions/"+fork.SessionID+"/messages", nil).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
	bob.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0].SessionID != b {
		t.Fatalf("bob's listing after alice's fork: %+v", list.Items)
	}
	if msgs := alice.all(fork.SessionID, true); len(msgs) != 1 || msgs[0].MessageID != before[0].MessageID {
		t.Fatalf("alice's fork reads %s", summary(msgs))
	}

	// Tokens never reach the log, refused ones included.
	if out := logs.String(); strings.Contains(out, aliceTok) || strings.Contains(out, bobTok) || strings.Contains(out, aliceTok[:40]) {
		t.Fatal("a bearer token appears in the server's log")
	}
}
