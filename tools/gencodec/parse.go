package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// kind is how a field is written and read.
type kind int

const (
	kString  kind = iota // string or a named string type
	kInt                 // int, int8..int64
	kUint                // uint, uint8..uint64
	kBool                //
	kBytes               // []byte
	kAny                 // any
	kStrings             // []string
	kPtr                 // *T, T a struct of the package
	kStruct              // T
	kList                // []T
)

// field is one msgpack field of a struct, in declared order.
type field struct {
	goName    string // the Go field name
	key       string // the msgpack key
	omitempty bool
	shared    bool   // codec:"shared": interned across a page when decoded
	kind      kind   //
	goType    string // the Go type of a scalar (for conversions)
	elem      string // the struct type of kPtr, kStruct and kList
}

// structType is one struct of the package with its msgpack fields.
type structType struct {
	name   string
	fields []field
}

// pkgInfo is what the generator knows of the package.
type pkgInfo struct {
	name    string
	structs map[string]*ast.StructType
	strs    map[string]bool // named types whose underlying type is string
	methods map[string]bool // methods of *decoder written by hand
}

func parsePackage(dir, skip string) (*pkgInfo, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	p := &pkgInfo{structs: map[string]*ast.StructType{}, strs: map[string]bool{}, methods: map[string]bool{}}
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == skip {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		if p.name != "" && f.Name.Name != p.name {
			return nil, fmt.Errorf("%s: packages %s and %s", dir, p.name, f.Name.Name)
		}
		p.name = f.Name.Name
		for _, decl := range f.Decls {
			p.collect(decl)
		}
	}
	if p.name == "" {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	return p, nil
}

func (p *pkgInfo) collect(decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			switch t := ts.Type.(type) {
			case *ast.StructType:
				p.structs[ts.Name.Name] = t
			case *ast.Ident:
				if t.Name == "string" {
					p.strs[ts.Name.Name] = true
				}
			}
		}
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) != 1 {
			return
		}
		if star, ok := d.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "decoder" {
				p.methods[d.Name.Name] = true
			}
		}
	}
}

// closure returns the roots and every struct they hold, roots first, the
// rest in the order they are reached.
func (p *pkgInfo) closure(roots []string) ([]*structType, error) {
	var out []*structType
	seen := map[string]bool{}
	var visit func(name string) error
	visit = func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		st, err := p.structType(name)
		if err != nil {
			return err
		}
		out = append(out, st)
		for _, f := range st.fields {
			if f.elem != "" {
				if err := visit(f.elem); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := visit(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *pkgInfo) structType(name string) (*structType, error) {
	ast, ok := p.structs[name]
	if !ok {
		return nil, fmt.Errorf("no struct type %s", name)
	}
	st := &structType{name: name}
	for _, af := range ast.Fields.List {
		if len(af.Names) == 0 {
			return nil, fmt.Errorf("%s: embedded fields are not supported", name)
		}
		tag := ""
		if af.Tag != nil {
			t, err := strconv.Unquote(af.Tag.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: tag %s: %w", name, af.Tag.Value, err)
			}
			tag = t
		}
		key, opts, _ := strings.Cut(reflect.StructTag(tag).Get("msgpack"), ",")
		for _, n := range af.Names {
			if !n.IsExported() || key == "-" {
				continue
			}
			f := field{goName: n.Name, key: key, omitempty: hasOpt(opts, "omitempty"),
				shared: reflect.StructTag(tag).Get("codec") == "shared"}
			if f.key == "" {
				f.key = n.Name
			}
			if len(f.key) >= 32 {
				return nil, fmt.Errorf("%s.%s: key %q is not a fixstr", name, n.Name, f.key)
			}
			if err := p.typeOf(&f, af.Type); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", name, n.Name, err)
			}
			st.fields = append(st.fields, f)
		}
	}
	return st, nil
}

// typeOf sets the kind of f from its Go type.
func (p *pkgInfo) typeOf(f *field, t ast.Expr) error {
	switch t := t.(type) {
	case *ast.Ident:
		f.goType = t.Name
		switch t.Name {
		case "string":
			f.kind = kString
		case "int", "int8", "int16", "int32", "int64":
			f.kind = kInt
		case "uint", "uint8", "uint16", "uint32", "uint64":
			f.kind = kUint
		case "bool":
			f.kind = kBool
		case "any":
			f.kind = kAny
		default:
			switch {
			case p.strs[t.Name]:
				f.kind = kString
			case p.structs[t.Name] != nil:
				f.kind, f.elem = kStruct, t.Name
			default:
				return fmt.Errorf("type %s is not supported", t.Name)
			}
		}
		return nil
	case *ast.InterfaceType:
		if t.Methods != nil && len(t.Methods.List) > 0 {
			return fmt.Errorf("only the empty interface is supported")
		}
		f.kind = kAny
		return nil
	case *ast.StarExpr:
		id, ok := t.X.(*ast.Ident)
		if !ok || p.structs[id.Name] == nil {
			return fmt.Errorf("only pointers to the package's structs are supported")
		}
		f.kind, f.elem = kPtr, id.Name
		return nil
	case *ast.ArrayType:
		id, ok := t.Elt.(*ast.Ident)
		if t.Len != nil || !ok {
			return fmt.Errorf("only slices of named types are supported")
		}
		switch {
		case id.Name == "byte":
			f.kind = kBytes
		case id.Name == "string":
			f.kind = kStrings
		case p.structs[id.Name] != nil:
			f.kind, f.elem = kList, id.Name
		default:
			return fmt.Errorf("slices of %s are not supported", id.Name)
		}
		return nil
	}
	return fmt.Errorf("type %T is not supported", t)
}

func hasOpt(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}
