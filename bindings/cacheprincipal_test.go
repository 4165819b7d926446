package bindings

import (
	"encoding/base64"
	"testing"
)

// TestCachePrincipal: the names the JS host's principalOf gives (js/cache.js).
func TestCachePrincipal(t *testing.T) {
	t.Parallel()
	jwt := func(payload string) string {
		return "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln"
	}
	for _, c := range []struct{ token, want string }{
		{"", "shared"},
		{jwt(`{"sub":"alice","exp":1}`), "sub:alice"},
		{jwt(`{"sub":""}`), "token:"},
		{"abc", "token:ba7816bf8f01cfea414140de"}, // sha256("abc")
	} {
		got := CachePrincipal(c.token)
		if c.want == "token:" {
			if len(got) != len("token:")+24 || got[:6] != "token:" {
				t.Errorf("CachePrincipal(%q) = %q, want a token digest", c.token, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("CachePrincipal(%q) = %q, want %q", c.token, got, c.want)
		}
	}
}
