package synccore

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// Every code has its sentinel, and errors.Is matches on the code through
// wrapping.
func TestSentinelPerCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes, sentinels := 0, 0
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			switch name := vs.Names[0].Name; {
			case strings.HasPrefix(name, "Code"):
				codes++
			case strings.HasPrefix(name, "Err"):
				sentinels++
			}
		}
		return true
	})
	if codes == 0 || codes != sentinels {
		t.Fatalf("%d codes, %d sentinels", codes, sentinels)
	}
	err = fmt.Errorf("reading: %w", Errorf(CodeNotFound, "session %q", "s1"))
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		t.Fatalf("errors.Is on %v", err)
	}
}
