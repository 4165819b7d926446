package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/synccore"
)

// TestBadInput sends every kind of bad request and checks each gets its
// typed error, and that the session keeps working afterwards.
func TestBadInput(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	s.say(sid, "first")
	s.waitIdle(sid, 2)
	msgs := "/v1/sessions/" + sid + "/messages"

	cases := []struct {
		name   string
		method string
		path   string
		body   any
		hdr    []string
		status int
		code   string
	}{
		{"malformed json", "POST", msgs, `{"parts": [`, nil, 400, synccore.CodeMalformed},
		{"json with trailing data", "POST", msgs, `{"parts":[{"type":"text","text":"a"}]} {}`, nil, 400, synccore.CodeMalformed},
		{"empty body", "POST", msgs, "", []string{"Content-Type: application/json"}, 400, synccore.CodeMalformed},
		{"malformed msgpack", "POST", msgs, []byte{0xc1, 0x00}, []string{"Content-Type: application/msgpack"}, 400, synccore.CodeMalformed},
		{"wrong shape", "POST", msgs, `{"parts": "text"}`, nil, 400, synccore.CodeBadRequest},
		{"no parts", "POST", msgs, `{"parts": []}`, nil, 400, synccore.CodeInvalidMessage},
		{"unsupported content type", "POST", msgs, `parts=1`, []string{"Content-Type: application/x-www-form-urlencoded"}, 400, synccore.CodeBadRequest},
		{"unknown part type", "POST", msgs, `{"parts":[{"type":"hologram","text":"a"}]}`, nil, 400, synccore.CodeUnknownPartType},
		{"agent-only part from a user", "POST", msgs, `{"parts":[{"type":"tool","tool_name":"x"}]}`, nil, 400, synccore.CodeInvalidPart},
		{"user part with a state", "POST", msgs, `{"parts":[{"type":"text","text":"a","state":"streaming"}]}`, nil, 400, synccore.CodeInvalidPart},
		{"bad visibility", "POST", msgs, `{"parts":[{"type":"text","text":"a"}],"visibility":"secret"}`, nil, 400, synccore.CodeBadRequest},
		{"oversize body", "POST", msgs, `{"parts":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}`, nil, 413, synccore.CodeTooLarge},
		{"limit 0", "GET", msgs + "?limit=0", nil, nil, 400, synccore.CodeBadRequest},
		{"limit -1", "GET", msgs + "?limit=-1", nil, nil, 400, synccore.CodeBadRequest},
		{"limit abc", "GET", msgs + "?limit=abc", nil, nil, 400, synccore.CodeBadRequest},
		{"before_sequence abc", "GET", msgs + "?before_sequence=abc", nil, nil, 400, synccore.CodeBadRequest},
		{"before_sequence 0", "GET", msgs + "?before_sequence=0", nil, nil, 400, synccore.CodeBadRequest},
		{"include_internal maybe", "GET", msgs + "?include_internal=maybe", nil, nil, 400, synccore.CodeBadRequest},
		{"unknown session messages", "GET", "/v1/sessions/nope/messages", nil, nil, 404, synccore.CodeNotFound},
		{"unknown session post", "POST", "/v1/sessions/nope/messages", textParts("x"), nil, 404, synccore.CodeNotFound},
		{"unknown session action", "POST", "/v1/sessions/nope/actions", `{"action_type":"stop"}`, nil, 404, synccore.CodeNotFound},
		{"unknown session subscribe", "GET", "/v1/sessions/nope/subscribe", nil, nil, 404, synccore.CodeNotFound},
		{"unknown interaction", "POST", "/v1/sessions/" + sid + "/interactions/nope", `{"response":{"approved":true}}`, nil, 404, synccore.CodeNotFound},
		{"answer without response", "POST", "/v1/sessions/" + sid + "/interactions/nope", `{}`, nil, 400, synccore.CodeBadRequest},
		{"unknown route", "GET", "/v1/nothing", nil, nil, 404, synccore.CodeNotFound},
		{"unknown method", "DELETE", "/v1/sessions", nil, nil, 404, synccore.CodeNotFound},
		{"root without a demo page", "GET", "/", nil, nil, 404, synccore.CodeNotFound},
		{"subscribe without upgrade", "GET", "/v1/sessions/" + sid + "/subscribe", nil, nil, 400, synccore.CodeBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(c.method, c.path, c.body, c.hdr...)
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q, want JSON", ct)
			}
			r.expectError(t, c.status, c.code)
		})
	}

	// An oversize body without Content-Length (chunked) is cut at the limit.
	big := `{"parts":[{"type":"text","text":"` + strings.Repeat("y", 2<<20) + `"}]}`
	req, _ := http.NewRequest("POST", s.URL+msgs, io.NopCloser(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if req.ContentLength != 0 || resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"too_large"`) {
		t.Fatalf("chunked oversize body: length %d, %d %s", req.ContentLength, resp.StatusCode, body)
	}

	// A msgpack client gets its errors in msgpack.
	r := s.do("GET", msgs+"?limit=0", nil, "Accept: application/msgpack")
	if r.Header.Get("Content-Type") != "application/msgpack" {
		t.Fatalf("msgpack error content type %q", r.Header.Get("Content-Type"))
	}
	r.expectError(t, 400, synccore.CodeBadRequest)

	// Nothing is lost and the session is not wedged.
	s.say(sid, "still alive?")
	after := s.waitIdle(sid, 4)
	if len(after) != 4 || !strings.Contains(textOf(after[3]), "still alive?") {
		t.Fatalf("session after bad input: %s", summary(after))
	}
}

func TestTokenAndOrigin(t *testing.T) {
	s := newServer(t, serverOpts{Token: "s3cret", Origins: []string{"http://ui.example"}})
	sid := s.createSession() // with the right token

	s.token = ""
	s.do("GET", "/healthz", nil).expectError(t, 401, synccore.CodeUnauthorized)
	s.do("GET", "/v1/sessions", nil, "Authorization: Bearer wrong").expectError(t, 401, synccore.CodeUnauthorized)
	s.do("GET", "/v1/sessions?token=s3cret", nil).expectError(t, 401, synccore.CodeUnauthorized) // query token only on subscribe
	s.do("POST", "/v1/sessions/"+sid+"/messages", textParts("x")).expectError(t, 401, synccore.CodeUnauthorized)
	s.token = "s3cret"
	s.do("GET", "/v1/sessions", nil).expect(t, 200, nil)

	// Origins: same host and listed origins pass, others are refused.
	s.do("GET", "/v1/sessions", nil, "Origin: http://evil.example").expectError(t, 403, synccore.CodeForbidden)
	r := s.do("GET", "/v1/sessions", nil, "Origin: http://ui.example")
	r.expect(t, 200, nil)
	if r.Header.Get("Access-Control-Allow-Origin") != "http://ui.example" {
		t.Fatalf("CORS header %q", r.Header.Get("Access-Control-Allow-Origin"))
	}
	s.do("GET", "/v1/sessions", nil, "Origin: "+s.URL).expect(t, 200, nil)
	pre := s.do("OPTIONS", "/v1/sessions", nil, "Origin: http://ui.example", "Access-Control-Request-Method: POST")
	if pre.Status != 204 || !strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight %d %v", pre.Status, pre.Header)
	}

	// WebSocket: bad token, bad origin, query token, header token.
	dial := func(url string, h http.Header) (int, error) {
		c, resp, err := websocket.DefaultDialer.Dial(url, h)
		if err == nil {
			c.Close()
			return 101, nil
		}
		if resp == nil {
			t.Fatalf("dial %s: %v", url, err)
		}
		return resp.StatusCode, err
	}
	url := s.wsURL(sid)
	if st, _ := dial(url, nil); st != 401 {
		t.Fatalf("subscribe without token: %d", st)
	}
	if st, _ := dial(url+"?token=wrong", nil); st != 401 {
		t.Fatalf("subscribe with wrong token: %d", st)
	}
	if st, err := dial(url+"?token=s3cret", nil); st != 101 {
		t.Fatalf("subscribe with query token: %d %v", st, err)
	}
	if st, err := dial(url, http.Header{"Authorization": {"Bearer s3cret"}}); st != 101 {
		t.Fatalf("subscribe with header token: %d %v", st, err)
	}
	if st, _ := dial(url+"?token=s3cret", http.Header{"Origin": {"http://evil.example"}}); st != 403 {
		t.Fatalf("subscribe from a bad origin: %d", st)
	}
	if st, err := dial(url+"?token=s3cret", http.Header{"Origin": {"http://ui.example"}}); st != 101 {
		t.Fatalf("subscribe from an allowed origin: %d %v", st, err)
	}
}
