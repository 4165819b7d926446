package bindings

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCacheDoesNotLinkSQLite: bindings (what a host that does not cache
// imports) does not link SQLite; only bindings/cache does.
func TestCacheDoesNotLinkSQLite(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	deps := func(pkg string) string {
		out, err := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return string(out)
	}
	if d := deps("."); strings.Contains(d, "ncruces/go-sqlite3") {
		t.Errorf("bindings links go-sqlite3:\n%s", d)
	}
	if d := deps("./cache"); !strings.Contains(d, "github.com/ncruces/go-sqlite3\n") {
		t.Errorf("bindings/cache does not link go-sqlite3 (the test checks nothing)")
	}
}
