package multinode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// The isolation suite of share links and roles (docs/protocol.md §3.3),
// against the real server on SQLite and on PostgreSQL, and across two
// nodes for revocation.

var accessSecret = []byte("access suite secret, 32+ bytes long")

func accessAuthorizer(t testing.TB) auth.Authorizer {
	a, err := auth.JWT(auth.JWTConfig{Secret: accessSecret})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func jwtFor(t testing.TB, sub string) string {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()}).SignedString(accessSecret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// caller is one credential on one node: a JWT, or a share token.
type caller struct {
	t     *testing.T
	base  string
	token string
}

func (c caller) do(method, path string, body any) answer {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	a.body, _ = io.ReadAll(resp.Body)
	if a.status >= 400 {
		if err := json.Unmarshal(a.body, &a.err); err != nil || a.err.Code == "" {
			c.t.Fatalf("%s %s: %d with an untyped body %q", method, path, a.status, a.body)
		}
	}
	return a
}

func (c caller) must(method, path string, body any, status int, out any) {
	c.t.Helper()
	a := c.do(method, path, body)
	if a.status != status {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, a.status, a.body, status)
	}
	if out != nil {
		if err := json.Unmarshal(a.body, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, a.body, err)
		}
	}
}

// refused checks a typed refusal: status and code.
func (c caller) refused(method, path string, body any, status int, code string) {
	c.t.Helper()
	a := c.do(method, path, body)
	if a.status != status || a.err.Code != code {
		c.t.Errorf("%s %s: %d %q, want %d %s", method, path, a.status, a.body, status, code)
	}
}

// subscribe opens a subscription with the share token in ?share= (as a
// browser link would) or the JWT as bearer; a refusal returns nil and the
// typed answer.
func (c caller) subscribe(sid string, asShare bool) (*websocket.Conn, answer) {
	c.t.Helper()
	u := "ws" + strings.TrimPrefix(c.base, "http") + "/v1/sessions/" + sid + "/subscribe"
	h := http.Header{}
	if asShare {
		u += "?share=" + url.QueryEscape(c.token)
	} else if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	conn, resp, err := websocket.DefaultDialer.Dial(u, h)
	if err == nil {
		c.t.Cleanup(func() { _ = conn.Close() })
		return conn, answer{status: resp.StatusCode}
	}
	if resp == nil {
		c.t.Fatalf("subscribe %s: %v", sid, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	a.body, _ = io.ReadAll(resp.Body)
	_ = json.Unmarshal(a.body, &a.err)
	return nil, a
}

// untilClosedBy reads a subscription until its last frame, which must be
// the error frame code with reason, then the socket's close; the timeout
// is generous and no timing is asserted.
func untilClosedBy(t *testing.T, c *websocket.Conn, last uint64, code, reason string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("the subscription ended without the error frame %s: %v", code, err)
		}
		frames, err := wire.DecodeFrames(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range frames {
			if f.Seq != last+1 {
				t.Fatalf("frame seq %d after %d", f.Seq, last)
			}
			last = f.Seq
			if f.Kind == synccore.FrameError || f.Kind == synccore.FrameResync {
				if f.Kind != synccore.FrameError || f.Code != code || f.Reason != reason {
					t.Fatalf("last frame %s %s %q, want error %s %q", f.Kind, f.Code, f.Reason, code, reason)
				}
				if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
					t.Fatalf("after the error frame: %v, want a normal close", err)
				}
				return
			}
		}
	}
}

// hello reads the subscription's first message, which starts with hello,
// and returns its last seq.
func hello(t *testing.T, c *websocket.Conn) uint64 {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	frames, err := wire.DecodeFrames(data)
	if err != nil || len(frames) == 0 || frames[0].Kind != synccore.FrameHello {
		t.Fatalf("first frames %+v, %v; want hello", frames, err)
	}
	return frames[len(frames)-1].Seq
}

// idle waits until the session holds n messages, none streaming.
func idle(t *testing.T, c caller, sid string, n int) []synccore.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var p synccore.MessagePage
		c.must("GET", "/v1/sessions/"+sid+"/messages?limit=200&include_internal=true", nil, http.StatusOK, &p)
		if len(p.Items) >= n && noneStreaming(p.Items) {
			return p.Items
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %d messages, want %d idle", sid, len(p.Items), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func noneStreaming(msgs []synccore.Message) bool {
	for _, m := range msgs {
		if m.State == synccore.MessageStreaming {
			return false
		}
	}
	return true
}

func fingerprint(msgs []synccore.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s@%d/%d;", m.MessageID, m.Sequence, m.Revision)
	}
	return b.String()
}

// authorOf is the author part's data of a user message, nil if none.
func authorOf(m synccore.Message) map[string]any {
	for _, p := range m.Parts {
		if p.Type == synccore.PartData && p.DataType == httpwire.DataTypeAuthor {
			d, _ := p.Data.(map[string]any)
			return d
		}
	}
	return nil
}

func textBody(s string) map[string]any {
	return map[string]any{"parts": []map[string]any{{"type": "text", "text": s}}}
}

// accessServers are the suite's stores: one node on a SQLite file, one
// node on PostgreSQL.
func accessServer(t *testing.T, kind string) string {
	t.Helper()
	switch kind {
	case "sqlite":
		ctx := context.Background()
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "access.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(ctx, server.Config{Store: st, Logger: logger(), Authorizer: accessAuthorizer(t),
			Limits: server.Limits{RequestsPerSecond: -1}})
		if err != nil {
			st.Close()
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Close(ctx)
			hs.CloseClientConnections()
			hs.Close()
			st.Close()
		})
		return hs.URL
	default:
		n := startNode(t, pg.Database(t), "n1", 0, func(c *server.Config) { c.Authorizer = accessAuthorizer(t) })
		return n.http.URL
	}
}

func TestAccessIsolation(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testAccessIsolation(t, accessServer(t, kind))
		})
	}
}

func testAccessIsolation(t *testing.T, base string) {
	alice := caller{t, base, jwtFor(t, "alice")}
	bob := caller{t, base, jwtFor(t, "bob")}
	carol := caller{t, base, jwtFor(t, "carol")}

	var sess struct {
		SessionID string `json:"session_id"`
	}
	alice.must("POST", "/v1/sessions", map[string]any{}, http.StatusCreated, &sess)
	sid := sess.SessionID
	alice.must("POST", "/v1/sessions/"+sid+"/messages", textBody("hello"), http.StatusCreated, nil)
	idle(t, alice, sid, 2)

	share := func(body map[string]any) httpwire.Share {
		var sh httpwire.Share
		alice.must("POST", "/v1/sessions/"+sid+"/shares", body, http.StatusCreated, &sh)
		if !strings.HasPrefix(sh.Token, httpwire.SharePrefix) || sh.ShareID == "" || sh.SessionID != sid {
			t.Fatalf("share %+v", sh)
		}
		return sh
	}
	readSh := share(map[string]any{"mode": "read"})
	writeSh := share(map[string]any{"mode": "write"})
	forksSh := share(map[string]any{"mode": "read", "include_forks": true})
	expiring := share(map[string]any{"mode": "write", "expires_at": time.Now().Add(300 * time.Millisecond).UnixMilli()})
	alice.refused("POST", "/v1/sessions/"+sid+"/shares", map[string]any{"mode": "admin"}, 400, synccore.CodeBadRequest)
	alice.refused("POST", "/v1/sessions/"+sid+"/shares", map[string]any{"expires_at": 1}, 400, synccore.CodeBadRequest)
	var listed struct{ Items []httpwire.Share }
	alice.must("GET", "/v1/sessions/"+sid+"/shares", nil, http.StatusOK, &listed)
	if len(listed.Items) != 4 || listed.Items[0].Token != "" {
		t.Fatalf("listed shares %+v: want 4, without tokens", listed.Items)
	}
	seen := map[string]bool{}
	for _, sh := range listed.Items {
		seen[sh.ShareID] = true
	}
	for _, want := range []string{readSh.ShareID, writeSh.ShareID, forksSh.ShareID, expiring.ShareID} {
		if !seen[want] {
			t.Fatalf("listed shares %+v: %s missing", listed.Items, want)
		}
	}
	reader := caller{t, base, readSh.Token}
	writer := caller{t, base, writeSh.Token}

	before := fingerprint(idle(t, alice, sid, 2))
	interaction := "/v1/sessions/" + sid + "/interactions/i-1"
	ownerOnly := []struct {
		method, path string
		body         any
	}{
		{"PATCH", "/v1/sessions/" + sid, map[string]any{"title": "x"}},
		{"DELETE", "/v1/sessions/" + sid, nil},
		{"POST", "/v1/sessions/" + sid + "/fork", map[string]any{"before_sequence": 2}},
		{"POST", "/v1/sessions/" + sid + "/shares", map[string]any{}},
		{"GET", "/v1/sessions/" + sid + "/shares", nil},
		{"DELETE", "/v1/sessions/" + sid + "/shares/" + readSh.ShareID, nil},
		{"PUT", "/v1/sessions/" + sid + "/members/dave", map[string]any{"role": "editor"}},
		{"DELETE", "/v1/sessions/" + sid + "/members/alice", nil},
	}
	writes := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/sessions/" + sid + "/messages", textBody("intruder")},
		{"POST", interaction, map[string]any{"response": map[string]any{"approved": true}}},
		{"POST", "/v1/sessions/" + sid + "/actions", map[string]any{"action_type": "set_approval_mode", "value": "auto"}},
		{"POST", "/v1/chat/" + sid + "/stop", nil},
	}
	reads := []string{"/messages", "/branches?sequence=1", "/alternatives?from=1&to=2", "/members"}

	// A stranger: every route is 404, as for an unknown session.
	for _, r := range reads {
		bob.refused("GET", "/v1/sessions/"+sid+r, nil, 404, synccore.CodeNotFound)
	}
	for _, e := range append(ownerOnly, writes...) {
		bob.refused(e.method, e.path, e.body, 404, synccore.CodeNotFound)
	}
	if c, a := bob.subscribe(sid, false); c != nil || a.status != 404 {
		t.Errorf("a stranger's subscription: %d %s, want 404", a.status, a.body)
	}

	// A read link reads and subscribes, and nothing else.
	for _, r := range reads {
		reader.must("GET", "/v1/sessions/"+sid+r, nil, http.StatusOK, nil)
	}
	for _, e := range writes {
		reader.refused(e.method, e.path, e.body, 403, synccore.CodeForbidden)
	}
	for _, e := range ownerOnly {
		reader.refused(e.method, e.path, e.body, 403, synccore.CodeForbidden)
	}
	reader.refused("POST", "/v1/sessions", map[string]any{}, 403, synccore.CodeForbidden)
	reader.refused("GET", "/v1/sessions", nil, 403, synccore.CodeForbidden)
	caller{t, base, httpwire.SharePrefix + "made-up"}.refused("GET", "/v1/sessions/"+sid+"/messages", nil, 401, synccore.CodeUnauthorized)
	// A viewer member likewise; a member of nothing is a stranger.
	alice.must("PUT", "/v1/sessions/"+sid+"/members/bob", map[string]any{"role": "viewer"}, http.StatusOK, nil)
	alice.refused("PUT", "/v1/sessions/"+sid+"/members/alice", map[string]any{"role": "viewer"}, 400, synccore.CodeBadRequest)
	alice.refused("PUT", "/v1/sessions/"+sid+"/members/carol", map[string]any{"role": "owner"}, 400, synccore.CodeBadRequest)
	for _, r := range reads {
		bob.must("GET", "/v1/sessions/"+sid+r, nil, http.StatusOK, nil)
	}
	for _, e := range writes {
		bob.refused(e.method, e.path, e.body, 403, synccore.CodeForbidden)
	}
	for _, e := range ownerOnly {
		bob.refused(e.method, e.path, e.body, 403, synccore.CodeForbidden)
	}
	carol.refused("GET", "/v1/sessions/"+sid+"/messages", nil, 404, synccore.CodeNotFound)
	var list struct {
		Items []struct {
			SessionID string `json:"session_id"`
		}
	}
	bob.must("GET", "/v1/sessions", nil, http.StatusOK, &list)
	if len(list.Items) != 0 {
		t.Errorf("bob's listing holds %+v: a membership lists nothing", list.Items)
	}
	if after := fingerprint(idle(t, alice, sid, 2)); after != before {
		t.Fatalf("refusals changed the session:\n%s\n%s", before, after)
	}

	// A link's subscription ends when the link expires. (On a machine so
	// slow that the link expired before the subscription opened, the
	// refusal is checked instead.)
	soon := share(map[string]any{"expires_at": time.Now().Add(2 * time.Second).UnixMilli()})
	if c, a := (caller{t, base, soon.Token}).subscribe(sid, true); c != nil {
		untilClosedBy(t, c, hello(t, c), "revoked", "share expired")
	} else if a.status != 401 {
		t.Errorf("subscription with an expiring link: %d %s", a.status, a.body)
	}

	// The expired link is refused everywhere, the socket included.
	expired := caller{t, base, expiring.Token}
	for deadline := time.Now().Add(20 * time.Second); expired.do("GET", "/v1/sessions/"+sid+"/messages", nil).status != 401; {
		if time.Now().After(deadline) {
			t.Fatal("the expired link is still accepted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	expired.refused("POST", "/v1/sessions/"+sid+"/messages", textBody("late"), 401, synccore.CodeUnauthorized)
	if c, a := expired.subscribe(sid, true); c != nil || a.status != 401 {
		t.Errorf("an expired link's subscription: %d %s, want 401", a.status, a.body)
	}

	// An editor and a write link post; each message says who wrote it.
	alice.must("PUT", "/v1/sessions/"+sid+"/members/bob", map[string]any{"role": "editor"}, http.StatusOK, nil)
	var m synccore.Message
	bob.must("POST", "/v1/sessions/"+sid+"/messages", textBody("from bob"), http.StatusCreated, &m)
	if a := authorOf(m); a["principal"] != "bob" {
		t.Errorf("bob's message author %v, want principal bob", a)
	}
	idle(t, alice, sid, 4)
	// An editor answers an interaction that a viewer link cannot.
	bob.must("POST", "/v1/sessions/"+sid+"/messages", textBody("scenario:approval"), http.StatusCreated, nil)
	pendingID := ""
	for deadline := time.Now().Add(30 * time.Second); pendingID == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no pending approval")
		}
		var p synccore.MessagePage
		alice.must("GET", "/v1/sessions/"+sid+"/messages", nil, http.StatusOK, &p)
		for _, m := range p.Items {
			for _, part := range m.Parts {
				if part.Type == synccore.PartInteraction && part.Status == synccore.InteractionPending {
					pendingID = part.InteractionID
				}
			}
		}
	}
	approve := map[string]any{"response": map[string]any{"approved": true}}
	reader.refused("POST", "/v1/sessions/"+sid+"/interactions/"+pendingID, approve, 403, synccore.CodeForbidden)
	bob.must("POST", "/v1/sessions/"+sid+"/interactions/"+pendingID, approve, http.StatusOK, nil)
	idle(t, alice, sid, 6)
	writer.must("POST", "/v1/sessions/"+sid+"/messages", textBody("from the link"), http.StatusCreated, &m)
	if a := authorOf(m); a["share_id"] != writeSh.ShareID {
		t.Errorf("the link's message author %v, want share_id %s", a, writeSh.ShareID)
	}
	forged := map[string]any{"parts": []map[string]any{{"type": "text", "text": "x"},
		{"type": "data", "data_type": httpwire.DataTypeAuthor, "data": map[string]any{"principal": "alice"}}}}
	bob.refused("POST", "/v1/sessions/"+sid+"/messages", forged, 400, synccore.CodeInvalidPart)
	msgs := idle(t, alice, sid, 8)
	if a := authorOf(msgs[0]); a != nil {
		t.Errorf("the owner's message has an author part %v", a)
	}
	for _, e := range ownerOnly {
		writer.refused(e.method, e.path, e.body, 403, synccore.CodeForbidden)
		bob.refused(e.method, e.path, e.body, 403, synccore.CodeForbidden)
	}

	// Forks: a link reads its conversation's other sessions only if it
	// includes them, and writes none.
	var fork struct {
		SessionID string `json:"session_id"`
	}
	alice.must("POST", "/v1/sessions/"+sid+"/fork", map[string]any{"before_sequence": 2}, http.StatusCreated, &fork)
	idle(t, alice, fork.SessionID, 1)
	reader.refused("GET", "/v1/sessions/"+fork.SessionID+"/messages", nil, 404, synccore.CodeNotFound)
	forks := caller{t, base, forksSh.Token}
	forks.must("GET", "/v1/sessions/"+fork.SessionID+"/messages", nil, http.StatusOK, nil)
	forks.refused("POST", "/v1/sessions/"+fork.SessionID+"/messages", textBody("x"), 403, synccore.CodeForbidden)
	writer.refused("GET", "/v1/sessions/"+fork.SessionID+"/messages", nil, 404, synccore.CodeNotFound)

	// Revoking a link ends its subscription with the typed close; the
	// link is refused from then on.
	c, a := reader.subscribe(sid, true)
	if c == nil {
		t.Fatalf("the read link's subscription: %d %s", a.status, a.body)
	}
	seq := hello(t, c)
	owned, _ := alice.subscribe(sid, false)
	hello(t, owned)
	alice.must("DELETE", "/v1/sessions/"+sid+"/shares/"+readSh.ShareID, nil, http.StatusNoContent, nil)
	untilClosedBy(t, c, seq, "revoked", "share revoked")
	reader.refused("GET", "/v1/sessions/"+sid+"/messages", nil, 401, synccore.CodeUnauthorized)
	if c, a := reader.subscribe(sid, true); c != nil || a.status != 401 {
		t.Errorf("a revoked link's subscription: %d %s, want 401", a.status, a.body)
	}
	alice.refused("DELETE", "/v1/sessions/"+sid+"/shares/"+readSh.ShareID, nil, 404, synccore.CodeNotFound)

	// Removing a member ends theirs; they are a stranger again.
	c, a = bob.subscribe(sid, false)
	if c == nil {
		t.Fatalf("bob's subscription: %d %s", a.status, a.body)
	}
	seq = hello(t, c)
	alice.must("DELETE", "/v1/sessions/"+sid+"/members/bob", nil, http.StatusNoContent, nil)
	untilClosedBy(t, c, seq, "revoked", "membership removed")
	bob.refused("GET", "/v1/sessions/"+sid+"/messages", nil, 404, synccore.CodeNotFound)

	// The owner's subscription went on through all of it.
	alice.must("POST", "/v1/sessions/"+sid+"/messages", textBody("still here"), http.StatusCreated, nil)
	_ = owned.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, _, err := owned.ReadMessage(); err != nil {
		t.Fatalf("the owner's subscription: %v", err)
	}
}

// A link revoked on one node ends its subscription on the other at once
// (the bus carries the revocation); a write link posts through either.
func TestAccessRevokedAcrossNodes(t *testing.T) {
	t.Parallel()
	db := pg.Database(t)
	ns := natstest.Start(t)
	tune := func(c *server.Config) { c.Authorizer = accessAuthorizer(t) }
	n1 := startNATSNode(t, db, ns, "n1", 0, tune)
	n2 := startNATSNode(t, db, ns, "n2", 0, tune)
	alice1 := caller{t, n1.http.URL, jwtFor(t, "alice")}
	var sess struct {
		SessionID string `json:"session_id"`
	}
	alice1.must("POST", "/v1/sessions", map[string]any{}, http.StatusCreated, &sess)
	sid := sess.SessionID
	alice1.must("POST", "/v1/sessions/"+sid+"/messages", textBody("hello"), http.StatusCreated, nil)
	idle(t, alice1, sid, 2)
	var readSh, writeSh httpwire.Share
	alice1.must("POST", "/v1/sessions/"+sid+"/shares", map[string]any{}, http.StatusCreated, &readSh)
	alice1.must("POST", "/v1/sessions/"+sid+"/shares", map[string]any{"mode": "write"}, http.StatusCreated, &writeSh)

	// The write link posts through n2, which forwards to n1.
	var m synccore.Message
	caller{t, n2.http.URL, writeSh.Token}.must("POST", "/v1/sessions/"+sid+"/messages", textBody("via n2"), http.StatusCreated, &m)
	if a := authorOf(m); a["share_id"] != writeSh.ShareID {
		t.Errorf("forwarded post's author %v, want share_id %s", a, writeSh.ShareID)
	}
	caller{t, n2.http.URL, readSh.Token}.refused("POST", "/v1/sessions/"+sid+"/messages", textBody("no"), 403, synccore.CodeForbidden)
	idle(t, alice1, sid, 4)

	reader2 := caller{t, n2.http.URL, readSh.Token}
	c, a := reader2.subscribe(sid, true)
	if c == nil {
		t.Fatalf("subscribe on n2: %d %s", a.status, a.body)
	}
	seq := hello(t, c)
	alice1.must("DELETE", "/v1/sessions/"+sid+"/shares/"+readSh.ShareID, nil, http.StatusNoContent, nil)
	untilClosedBy(t, c, seq, "revoked", "share revoked")
	reader2.refused("GET", "/v1/sessions/"+sid+"/messages", nil, 401, synccore.CodeUnauthorized)
	// Revoked on n2, the write link is refused on n1, forwarded or not.
	caller{t, n2.http.URL, jwtFor(t, "alice")}.must("DELETE", "/v1/sessions/"+sid+"/shares/"+writeSh.ShareID, nil, http.StatusNoContent, nil)
	caller{t, n1.http.URL, writeSh.Token}.refused("POST", "/v1/sessions/"+sid+"/messages", textBody("gone"), 401, synccore.CodeUnauthorized)
}
