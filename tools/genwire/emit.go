package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// tsNames renames Go types whose TypeScript name differs: the JS host's
// Session is the live session, and an interaction's request and response
// are the hand-written unions narrowed by kind (index.d.ts).
var tsNames = map[string]string{
	"Session":             "SessionInfo",
	"InteractionRequest":  "ApprovalRequest | QuestionRequest",
	"InteractionResponse": "ApprovalResponse | QuestionResponse",
}

// skipped Go types have a hand-written TypeScript declaration.
var skipped = map[string]bool{"InteractionRequest": true, "InteractionResponse": true}

// declarations returns the TypeScript of the package in dir: its typed
// string unions and its structs, in source order.
func declarations(dir string) ([]byte, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/agentsync/agentsync/httpwire")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, t := range pkg.Types {
		if skipped[t.Name] {
			continue
		}
		spec := t.Decl.Specs[0].(*ast.TypeSpec)
		switch typ := spec.Type.(type) {
		case *ast.Ident:
			if typ.Name != "string" {
				return nil, fmt.Errorf("type %s: only string types become unions", t.Name)
			}
			if err := union(&b, t); err != nil {
				return nil, err
			}
		case *ast.StructType:
			if err := iface(&b, t.Name, t.Doc, typ); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("type %s: unsupported kind %T", t.Name, typ)
		}
	}
	return b.Bytes(), nil
}

// union writes a typed string's constants as a union of their values.
func union(b *bytes.Buffer, t *doc.Type) error {
	var values []string
	for _, group := range t.Consts {
		for _, s := range group.Decl.Specs {
			vs := s.(*ast.ValueSpec)
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return fmt.Errorf("type %s: a constant that is not a string literal", t.Name)
				}
				s, _ := strconv.Unquote(lit.Value)
				values = append(values, "'"+s+"'")
			}
		}
	}
	if len(values) == 0 {
		return fmt.Errorf("type %s has no constants", t.Name)
	}
	comment(b, "", t.Doc)
	fmt.Fprintf(b, "export type %s = %s;\n\n", t.Name, strings.Join(values, " | "))
	return nil
}

// iface writes a struct as an interface, one member per msgpack field.
func iface(b *bytes.Buffer, name, docText string, st *ast.StructType) error {
	comment(b, "", docText)
	fmt.Fprintf(b, "export interface %s {\n", tsName(name))
	for _, f := range st.Fields.List {
		if f.Tag == nil || len(f.Names) != 1 {
			return fmt.Errorf("%s: every field has one name and a msgpack tag", name)
		}
		tag, _ := strconv.Unquote(f.Tag.Value)
		key, opts, _ := strings.Cut(reflect.StructTag(tag).Get("msgpack"), ",")
		if key == "" || key == "-" {
			continue
		}
		ts, err := tsType(f.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", name, f.Names[0].Name, err)
		}
		opt := ""
		if strings.Contains(","+opts+",", ",omitempty,") {
			opt = "?"
		}
		text := f.Doc.Text()
		if text == "" {
			text = f.Comment.Text()
		}
		comment(b, "  ", text)
		fmt.Fprintf(b, "  %s%s: %s;\n", key, opt, ts)
	}
	b.WriteString("}\n\n")
	return nil
}

// tsType is the TypeScript of a Go field type.
func tsType(e ast.Expr) (string, error) {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "string":
			return "string", nil
		case "bool":
			return "boolean", nil
		case "int", "int64", "uint64", "int32":
			return "number", nil
		case "any":
			return "unknown", nil
		}
		return tsName(t.Name), nil
	case *ast.SelectorExpr: // synccore's model: the same names in index.d.ts
		return t.Sel.Name, nil
	case *ast.StarExpr:
		return tsType(t.X)
	case *ast.ArrayType:
		elem, err := tsType(t.Elt)
		if err != nil {
			return "", err
		}
		if strings.Contains(elem, " ") {
			elem = "(" + elem + ")"
		}
		return elem + "[]", nil
	}
	return "", fmt.Errorf("unsupported type %T", e)
}

func tsName(goName string) string {
	if n, ok := tsNames[goName]; ok {
		return n
	}
	return goName
}

// comment writes Go doc text as a JSDoc comment.
func comment(b *bytes.Buffer, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, lines[0])
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		fmt.Fprintf(b, "%s * %s\n", indent, strings.TrimRight(l, " "))
	}
	fmt.Fprintf(b, "%s */\n", indent)
}
