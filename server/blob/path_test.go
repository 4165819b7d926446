package blob_test

import (
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/blob"
)

// ParseFilePath reads back what FilePath writes, a signed URL's query
// ignored, and nothing else.
func TestParseFilePath(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("ab", 32)
	for _, sid := range []string{"ses_1", "a b", "x%y"} {
		u := blob.FilePath(sid, id)
		for _, v := range []string{u, u + "?expires=1&sig=x"} {
			if s, b, ok := blob.ParseFilePath(v); !ok || s != sid || b != id {
				t.Fatalf("%q: %q %q %v", v, s, b, ok)
			}
		}
	}
	for _, bad := range []string{"", "https://x/v1/sessions/s/files/" + id, "/v1/sessions//files/" + id,
		"/v1/sessions/s/files/" + id[:63], "/v1/sessions/s/files/" + strings.ToUpper(id), "/v1/sessions/a%2Fb/files/" + id,
		"/v1/sessions/s/files/" + id + "/sign", "data:text/plain,x"} {
		if _, _, ok := blob.ParseFilePath(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}
