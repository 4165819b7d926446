package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/synccore"
)

// FuzzPostBodies throws arbitrary bodies, as JSON and as msgpack, at the
// endpoints that take one. Whatever the bytes, the answer is a success or
// a typed 4xx error: never a 500, never a panic, never an untyped body.
// `go test` runs the seeds; `go test -fuzz FuzzPostBodies` explores.
func FuzzPostBodies(f *testing.F) {
	seeds := []string{
		`{"parts":[{"type":"text","text":"hi"}]}`,
		`{"parts":[{"type":"context","tag":"ref","context":"x"}],"visibility":"internal"}`,
		`{"parts":[{"type":"data","data":{"a":[1,2,{"b":null}]}}]}`,
		`{"parts":[{"type":"tool"}]}`,
		`{"parts":[{"type":"text","text":"x","part_id":"mine","sequence":-5}]}`,
		`{"parts":null}`, `{"parts":{}}`, `[]`, `null`, `"str"`, `{`, ``, "\x00\xff",
		`{"response":{"approved":"yes"}}`, `{"action_type":"stop","value":7}`,
		`{"action_type":"set_model","value":"` + strings.Repeat("m", 300) + `"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	s := newServer(f, serverOpts{})
	sid := s.createSession()
	f.Fuzz(func(t *testing.T, body []byte, asMsgpack bool) {
		s := s.with(t)
		ct := "application/json"
		if asMsgpack {
			// Re-encode what JSON can parse, so msgpack gets structure
			// too; otherwise send the raw bytes as msgpack.
			var v any
			if json.Unmarshal(body, &v) == nil {
				if b, err := msgpack.Marshal(v); err == nil {
					body = b
				}
			}
			ct = "application/msgpack"
		}
		for _, path := range []string{
			"/v1/sessions/" + sid + "/messages",
			"/v1/sessions/" + sid + "/actions",
			"/v1/sessions/" + sid + "/interactions/none",
			"/v1/sessions",
		} {
			r := s.do("POST", path, body, "Content-Type: "+ct)
			if r.Status >= 500 {
				t.Fatalf("POST %s %q: status %d %s", path, body, r.Status, r.Body)
			}
			if r.Status >= 400 {
				var e synccore.Error
				r.decode(t, &e)
				if e.Code == "" || e.Message == "" {
					t.Fatalf("POST %s: untyped error %s", path, r.Body)
				}
			}
		}
	})
}
