package agentsyncjs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// dts_test.go checks the model types of index.d.ts against the Go types
// they describe: every msgpack field of the Go struct is a member of the
// TypeScript interface and nothing else is, optional exactly when the Go
// field is omitempty, of a matching type, and every string enum (roles,
// states, part types, statuses, commands, events) has exactly the values of
// the Go constants. The TypeScript Part is a union narrowed by type (and a
// tool by state); the Go Part is flat: every variant's members are Go
// fields, together they are all of them, and each variant's enums are the
// Go constants of its kind.

// goConsts returns synccore's string constants: by name, and the named
// type each typed one has.
func goConsts(t *testing.T) (values map[string]string, typeOf map[string]string) {
	values, typeOf = map[string]string{}, map[string]string{}
	dir := filepath.Join("..", "synccore")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					values[name.Name] = v
					if id, ok := vs.Type.(*ast.Ident); ok {
						typeOf[name.Name] = id.Name
					}
				}
			}
		}
	}
	return values, typeOf
}

// enums are the Go constant groups the TypeScript unions must equal.
type enums map[string][]string

func loadEnums(t *testing.T) enums {
	values, typeOf := goConsts(t)
	e := enums{}
	for name, v := range values {
		if typ := typeOf[name]; typ != "" {
			e[typ] = append(e[typ], v)
			if typ != "PartState" { // a part's states are grouped by their kind's prefix too
				continue
			}
		}
		for _, prefix := range []string{"Tool", "Interaction", "Action", "ErrorScope", "State", "Status", "Cmd", "Ev"} {
			if strings.HasPrefix(name, prefix) && len(name) > len(prefix) && name[len(prefix)] >= 'A' && name[len(prefix)] <= 'Z' {
				e[prefix] = append(e[prefix], v)
			}
		}
	}
	for k := range e {
		slices.Sort(e[k])
	}
	return e
}

func readDTS(t *testing.T) *dts {
	src, err := os.ReadFile("index.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDTS(string(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// goField is one msgpack field of a Go struct.
type goField struct {
	key       string
	omitempty bool
	typ       reflect.Type
}

func goFields(t reflect.Type) []goField {
	var out []goField
	for i := range t.NumField() {
		f := t.Field(i)
		key, opts, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		if !f.IsExported() || key == "-" {
			continue
		}
		out = append(out, goField{key: key, omitempty: slices.Contains(strings.Split(opts, ","), "omitempty"), typ: f.Type})
	}
	return out
}

// checker compares one TypeScript member with one Go field.
type checker struct {
	t     *testing.T
	d     *dts
	enums enums
}

// sameSet reports whether two lists hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// checkType reports a mismatch between a Go field's type and a TS type;
// enum, when set, is the Go constant group a string field takes its values
// from.
func (c *checker) checkType(where string, gt reflect.Type, ts string, enum string) {
	c.t.Helper()
	if enum == "" && gt.Kind() == reflect.String && gt.PkgPath() != "" {
		enum = gt.Name() // a named string type: its typed constants
	}
	switch {
	case enum != "":
		want, ok := c.enums[enum]
		if !ok {
			c.t.Errorf("%s: no Go constants for %s", where, enum)
			return
		}
		got, err := c.d.literals(ts)
		if err != nil {
			c.t.Errorf("%s: %s should be the union of %s's values %q: %v", where, ts, enum, want, err)
			return
		}
		if !subsetOf(got, want) {
			c.t.Errorf("%s: %s allows %q, but the Go constants of %s are %q", where, ts, got, enum, want)
		}
	case gt.Kind() == reflect.String:
		c.want(where, ts, "string")
	case gt.Kind() == reflect.Bool:
		c.want(where, ts, "boolean")
	case gt.Kind() >= reflect.Int && gt.Kind() <= reflect.Uint64:
		c.want(where, ts, "number")
	case gt.Kind() == reflect.Interface:
		// any: TypeScript may narrow it per variant (unknown, an interface...)
	case gt.Kind() == reflect.Slice && gt.Elem().Kind() == reflect.Uint8:
		c.want(where, ts, "Uint8Array")
	case gt.Kind() == reflect.Slice:
		if !strings.HasSuffix(ts, "[]") {
			c.t.Errorf("%s: %s is not an array", where, ts)
			return
		}
		c.checkType(where+"[]", gt.Elem(), strings.TrimSuffix(ts, "[]"), "")
	case gt.Kind() == reflect.Pointer:
		c.checkType(where, gt.Elem(), ts, "")
	case gt.Kind() == reflect.Struct:
		c.want(where, ts, gt.Name())
	default:
		c.t.Errorf("%s: Go type %s has no TypeScript rule", where, gt)
	}
}

func subsetOf(got, want []string) bool {
	for _, g := range got {
		if !slices.Contains(want, g) {
			return false
		}
	}
	return len(got) > 0
}

func (c *checker) want(where, ts, want string) {
	c.t.Helper()
	if ts != want {
		c.t.Errorf("%s: TypeScript says %s, Go says %s", where, ts, want)
	}
}

// TestModelInterfacesMatchGo: the flat model types, field by field.
func TestModelInterfacesMatchGo(t *testing.T) {
	c := &checker{t: t, d: readDTS(t), enums: loadEnums(t)}
	for _, tc := range []struct {
		goType reflect.Type
		ts     string
		enums  map[string]string // Go field key -> its constant group, for plain string fields
		absent map[string]string // Go field key -> why the TypeScript type leaves it out
	}{
		{goType: reflect.TypeFor[synccore.Message](), ts: "Message"},
		{goType: reflect.TypeFor[synccore.MessagePage](), ts: "MessagePage"},
		{goType: reflect.TypeFor[synccore.View](), ts: "View", enums: map[string]string{"status": "Status"},
			absent: map[string]string{"digest": "a session's view has none; Core.view() declares View & { digest: string }"}},
		{goType: reflect.TypeFor[synccore.Command](), ts: "Command", enums: map[string]string{"type": "Cmd", "status": "Status"}},
		{goType: reflect.TypeFor[synccore.Event](), ts: "CoreEvent", enums: map[string]string{"type": "Ev"},
			absent: map[string]string{"page": "Go hosts only: the JavaScript host passes the page's bytes in data"}},
	} {
		members, err := c.d.members(tc.ts)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, f := range goFields(tc.goType) {
			where := tc.ts + "." + f.key
			m, ok := members[f.key]
			if !ok {
				if tc.absent[f.key] == "" {
					t.Errorf("%s: a field of Go's %s is missing", where, tc.goType.Name())
				}
				continue
			}
			seen[f.key] = true
			if m.optional != f.omitempty {
				t.Errorf("%s: optional is %v, but omitempty in Go is %v", where, m.optional, f.omitempty)
			}
			c.checkType(where, f.typ, m.typ, tc.enums[f.key])
		}
		for name := range members {
			if !seen[name] {
				t.Errorf("%s.%s: not a field of Go's %s", tc.ts, name, tc.goType.Name())
			}
		}
		// Every enum this type's fields name is covered whole by some field.
		for key, group := range tc.enums {
			if lits, err := c.d.literals(members[key].typ); err == nil && !sameSet(lits, c.enums[group]) {
				t.Errorf("%s.%s: %q, but the Go constants of %s are %q", tc.ts, key, lits, group, c.enums[group])
			}
		}
	}
}

// TestPartUnionMatchesGo: the Part union against the flat Go Part.
func TestPartUnionMatchesGo(t *testing.T) {
	c := &checker{t: t, d: readDTS(t), enums: loadEnums(t)}
	variants, err := c.d.variants("Part")
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]goField{}
	for _, f := range goFields(reflect.TypeFor[synccore.Part]()) {
		fields[f.key] = f
	}
	// Each part type's own enums (a tool's states, an interaction's
	// statuses...), as the Go constants group them.
	perType := map[string]map[string]string{
		"text":        {"state": "State"},
		"reasoning":   {"state": "State"},
		"tool":        {"state": "Tool"},
		"interaction": {"status": "Interaction"},
		"action":      {"state": "Action"},
		"error":       {"scope": "ErrorScope"},
	}
	covered := map[string]bool{}
	byType := map[string][]string{}              // part type -> its variants
	enumSeen := map[string]map[string][]string{} // part type -> field -> the literals its variants allow
	for _, v := range variants {
		members, err := c.d.members(v)
		if err != nil {
			t.Fatal(err)
		}
		types, err := c.d.literals(members["type"].typ)
		if err != nil || len(types) != 1 {
			t.Fatalf("%s.type: want one literal, got %q (%v)", v, types, err)
		}
		typ := types[0]
		byType[typ] = append(byType[typ], v)
		for name, m := range members {
			where := v + "." + name
			f, ok := fields[name]
			if !ok {
				t.Errorf("%s: not a field of Go's Part", where)
				continue
			}
			covered[name] = true
			if !f.omitempty && m.optional {
				t.Errorf("%s: optional, but Go's Part always has %s", where, name)
			}
			enum := perType[typ][name]
			if name == "type" {
				enum = "PartType"
			}
			c.checkType(where, f.typ, m.typ, enum)
			if enum != "" && name != "type" {
				lits, _ := c.d.literals(m.typ)
				if enumSeen[typ] == nil {
					enumSeen[typ] = map[string][]string{}
				}
				enumSeen[typ][name] = append(enumSeen[typ][name], lits...)
			}
		}
		for key, f := range fields {
			if _, ok := members[key]; !ok && !f.omitempty {
				t.Errorf("%s: lacks %s, which Go's Part always has", v, key)
			}
		}
	}
	for key := range fields {
		if !covered[key] {
			t.Errorf("Part.%s: a field of Go's Part that no TypeScript part type declares", key)
		}
	}
	var types []string
	for typ := range byType {
		types = append(types, typ)
	}
	if !sameSet(types, c.enums["PartType"]) {
		t.Errorf("Part types %q, but Go's PartType constants are %q", types, c.enums["PartType"])
	}
	// Across its variants, a part type allows every value of its enums.
	for typ, fieldsOf := range perType {
		for name, group := range fieldsOf {
			if !sameSet(enumSeen[typ][name], c.enums[group]) {
				t.Errorf("%s parts: %s allows %q, but the Go constants of %s are %q", typ, name, enumSeen[typ][name], group, c.enums[group])
			}
		}
	}
}

// TestDTSParserRefusesWhatItCannotRead keeps the checks above honest: an
// interface with a member the reader does not understand is an error when
// asked for, not an interface without that member.
func TestDTSParserRefusesWhatItCannotRead(t *testing.T) {
	d, err := parseDTS("export interface A { ok: string; 42 bad; }\nexport type B = 'x' | C;\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.members("A"); err == nil {
		t.Fatal("an unreadable member was skipped silently")
	}
	if _, err := d.literals("B"); err == nil {
		t.Fatal("an unknown name in a union was taken as a literal")
	}
}
