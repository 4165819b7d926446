package synccore_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxExported bounds synccore's public API (issue 23): the model, Client,
// Mirror, MessageList, the changes and the errors. The codec, the digest
// and the module's byte ABI live in internal/wire.
const maxExported = 60

// exportedDecls counts what `go doc -all` declares for the package in dir
// under the current build context: package-level value groups, funcs and
// types, and each type's value groups, constructors and methods.
func exportedDecls(t *testing.T, dir string) (int, []string) {
	t.Helper()
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, bp.ImportPath)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, v.Names[0])
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			names = append(names, f.Name)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, ty := range p.Types {
		names = append(names, ty.Name)
		values(ty.Consts)
		values(ty.Vars)
		funcs(ty.Funcs)
		funcs(ty.Methods)
	}
	return len(names), names
}

func TestExportedSurfaceIsSmall(t *testing.T) {
	n, names := exportedDecls(t, ".")
	t.Logf("go doc -all ./synccore declares %d funcs, methods, types and value groups", n)
	if n > maxExported {
		t.Errorf("synccore declares %d exported funcs, methods, types and value groups, want at most %d: %v", n, maxExported, names)
	}
}
