package agentsyncjs

import (
	"fmt"
	"regexp"
	"strings"
)

// dts_parse_test.go reads the declarations of a .d.ts file well enough to
// compare its model types with the Go ones: interfaces (members, their
// optionality and types, what they extend) and type aliases (unions of
// string literals or of names, and indexed types like Part['type']). It is
// not a TypeScript parser; a declaration it cannot read is an error when a
// test asks for it, never a silent pass.

type tsMember struct {
	name     string
	optional bool
	typ      string // as written, whitespace collapsed
}

type tsInterface struct {
	name    string
	extends []string
	members []tsMember
}

type dts struct {
	interfaces map[string]*tsInterface
	aliases    map[string]string // name -> the type as written
	unread     map[string]error  // interfaces with a member this cannot read
}

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`(?m)//.*$`)
	declStart    = regexp.MustCompile(`(?m)^(?:export\s+)?(?:declare\s+)?(interface|type)\s+(\w+)`)
	memberRE     = regexp.MustCompile(`^(\w+)(\??):\s*(.+)$`)
	methodRE     = regexp.MustCompile(`^(?:static\s+)?\w+\??\s*[(<]`)
)

func parseDTS(src string) (*dts, error) {
	src = lineComment.ReplaceAllString(blockComment.ReplaceAllString(src, ""), "")
	d := &dts{interfaces: map[string]*tsInterface{}, aliases: map[string]string{}, unread: map[string]error{}}
	for _, loc := range declStart.FindAllStringSubmatchIndex(src, -1) {
		kind, name := src[loc[2]:loc[3]], src[loc[4]:loc[5]]
		rest := src[loc[1]:]
		if kind == "type" {
			eq := strings.Index(rest, "=")
			end := strings.Index(rest, ";")
			if eq < 0 || end < eq {
				return nil, fmt.Errorf("type %s: no `= ...;`", name)
			}
			d.aliases[name] = collapse(rest[eq+1 : end])
			continue
		}
		open := strings.Index(rest, "{")
		if open < 0 {
			return nil, fmt.Errorf("interface %s: no body", name)
		}
		body, ok := braced(rest[open:])
		if !ok {
			return nil, fmt.Errorf("interface %s: unbalanced braces", name)
		}
		it := &tsInterface{name: name}
		if head := strings.TrimSpace(rest[:open]); strings.HasPrefix(head, "extends ") {
			for _, e := range strings.Split(strings.TrimPrefix(head, "extends "), ",") {
				it.extends = append(it.extends, strings.TrimSpace(e))
			}
		}
		for _, m := range splitMembers(body) {
			if methodRE.MatchString(m) {
				continue // methods are not model fields
			}
			sm := memberRE.FindStringSubmatch(m)
			if sm == nil {
				d.unread[name] = fmt.Errorf("interface %s: cannot read member %q", name, m)
				continue
			}
			it.members = append(it.members, tsMember{name: sm[1], optional: sm[2] == "?", typ: collapse(sm[3])})
		}
		d.interfaces[name] = it
	}
	return d, nil
}

// braced returns the text inside the braces s starts with.
func braced(s string) (string, bool) {
	depth := 0
	for i, c := range s {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[1:i], true
			}
		}
	}
	return "", false
}

// splitMembers splits an interface body at the semicolons of its top level.
func splitMembers(body string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range body {
		switch c {
		case '{', '(', '<', '[':
			depth++
		case '}', ')', '>', ']':
			depth--
		case ';':
			if depth == 0 {
				if m := collapse(body[start:i]); m != "" {
					out = append(out, m)
				}
				start = i + 1
			}
		}
	}
	if m := collapse(body[start:]); m != "" {
		out = append(out, m)
	}
	return out
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// members returns an interface's members with those it inherits, its own
// last (an override wins).
func (d *dts) members(name string) (map[string]tsMember, error) {
	it, ok := d.interfaces[name]
	if !ok {
		return nil, fmt.Errorf("no interface %s", name)
	}
	if err := d.unread[name]; err != nil {
		return nil, err
	}
	out := map[string]tsMember{}
	for _, base := range it.extends {
		inherited, err := d.members(base)
		if err != nil {
			return nil, fmt.Errorf("%s extends: %w", name, err)
		}
		for k, m := range inherited {
			out[k] = m
		}
	}
	for _, m := range it.members {
		out[m.name] = m
	}
	return out, nil
}

// union returns the alternatives of a union type as written.
func union(t string) []string {
	var out []string
	for _, alt := range strings.Split(t, "|") {
		if alt = strings.TrimSpace(alt); alt != "" {
			out = append(out, alt)
		}
	}
	return out
}

// literals resolves a type to the string literals it allows: a union of
// literals, of aliases of them, or T['field'] over a union of interfaces.
func (d *dts) literals(t string) ([]string, error) {
	var out []string
	for _, alt := range union(t) {
		switch {
		case strings.HasPrefix(alt, "'") && strings.HasSuffix(alt, "'"):
			out = append(out, strings.Trim(alt, "'"))
		case strings.HasSuffix(alt, "']") && strings.Contains(alt, "['"):
			base, field, _ := strings.Cut(strings.TrimSuffix(alt, "']"), "['")
			ifaces, err := d.variants(base)
			if err != nil {
				return nil, err
			}
			for _, it := range ifaces {
				ms, err := d.members(it)
				if err != nil {
					return nil, err
				}
				m, ok := ms[field]
				if !ok {
					return nil, fmt.Errorf("%s has no %s", it, field)
				}
				lits, err := d.literals(m.typ)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", it, field, err)
				}
				out = append(out, lits...)
			}
		case d.aliases[alt] != "":
			lits, err := d.literals(d.aliases[alt])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", alt, err)
			}
			out = append(out, lits...)
		default:
			return nil, fmt.Errorf("%q is not a string literal type", alt)
		}
	}
	return out, nil
}

// variants resolves a name to the interfaces it stands for: itself, or
// every interface of the union it aliases (recursively).
func (d *dts) variants(name string) ([]string, error) {
	if _, ok := d.interfaces[name]; ok {
		return []string{name}, nil
	}
	t, ok := d.aliases[name]
	if !ok {
		return nil, fmt.Errorf("no type %s", name)
	}
	var out []string
	for _, alt := range union(t) {
		vs, err := d.variants(alt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, vs...)
	}
	return out, nil
}
