package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wazero.NewRuntimeConfigCompiler panics on a platform where wazero has no
// compiler (its doc says so: 386, riscv64, an OS it does not support, a
// sandbox without executable mmap). The Go host must run everywhere, so no
// source file of the package may call it; wazero.NewRuntimeConfig picks
// the compiler where there is one and the interpreter elsewhere.
//
// This reads the sources rather than running on such a platform because
// the test machines have none (amd64 only, no 386 execution, no emulator).
func TestNoPlatformBoundRuntimeConfig(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && sel.Sel.Name == "NewRuntimeConfigCompiler" {
				t.Errorf("%s calls wazero.NewRuntimeConfigCompiler, which panics where wazero has no compiler: use wazero.NewRuntimeConfig", name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source file checked")
	}
}
