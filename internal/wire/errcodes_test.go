package wire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// Every Code* constant of errors.go has exactly one row in ErrorCodes, so
// a new code cannot reach the wire without a status.
func TestErrorCodesCoverEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", "synccore", "errors.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Code") {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, _ := strconv.Unquote(lit.Value)
			consts[v] = true
		}
		return true
	})
	if len(consts) < 10 {
		t.Fatalf("found only %d codes in errors.go: %v", len(consts), consts)
	}
	rows := map[string]int{}
	for _, e := range ErrorCodes {
		rows[e.Code]++
		if !consts[e.Code] {
			t.Errorf("table row %q is not a Code constant", e.Code)
		}
		if e.Doc == "" {
			t.Errorf("%s has no doc", e.Code)
		}
	}
	for c := range consts {
		if rows[c] != 1 {
			t.Errorf("code %q has %d rows in ErrorCodes, want 1", c, rows[c])
		}
	}
}

// The statuses map back to a code of that status, one code per status.
func TestErrorStatusesRoundTrip(t *testing.T) {
	forStatus := map[int]string{}
	for _, e := range ErrorCodes {
		if !e.ForStatus {
			continue
		}
		if prev, dup := forStatus[e.Status]; dup {
			t.Errorf("status %d is claimed by %s and %s", e.Status, prev, e.Code)
		}
		forStatus[e.Status] = e.Code
	}
	for _, e := range ErrorCodes {
		if e.Status == 0 {
			if got := HTTPStatus(e.Code); got != 500 {
				t.Errorf("%s is never an HTTP answer; if a server sent it anyway it is a bug (500), got %d", e.Code, got)
			}
			continue
		}
		if got := HTTPStatus(e.Code); got != e.Status {
			t.Errorf("HTTPStatus(%s) = %d, want %d", e.Code, got, e.Status)
		}
		if back := CodeForHTTPStatus(e.Status); HTTPStatus(back) != e.Status && e.Status < 500 {
			t.Errorf("%d maps back to %s, whose status is %d", e.Status, back, HTTPStatus(back))
		}
	}
	for status, want := range map[int]string{400: synccore.CodeBadRequest, 401: synccore.CodeUnauthorized, 403: synccore.CodeForbidden,
		404: synccore.CodeNotFound, 409: synccore.CodeConflict, 413: synccore.CodeTooLarge, 418: synccore.CodeBadRequest, 429: synccore.CodeRateLimited,
		500: synccore.CodeInternal, 502: synccore.CodeInternal, 503: synccore.CodeInternal} {
		if got := CodeForHTTPStatus(status); got != want {
			t.Errorf("CodeForHTTPStatus(%d) = %s, want %s", status, got, want)
		}
	}
	if HTTPStatus("no_such_code") != 500 {
		t.Error("an unknown code is a server bug: 500")
	}
}
