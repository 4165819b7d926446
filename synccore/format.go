package synccore

import (
	"strconv"

	"github.com/agentsync/agentsync/synccore/internal/msgp"
)

// format.go formats the messages of typed errors without package fmt, which
// (with the os and reflect packages it links) made up a large part of the
// WebAssembly module. It knows the verbs and argument types the kit's
// messages use (%s %v %d %q %x %% with strings, the model's string types,
// integers, floats, bools, errors, Stringers, []string, []byte, []any and
// map[string]any) and writes exactly what fmt writes for them
// (format_test.go checks it against fmt). Anything else (a flag, a width,
// another type) goes to sprintfOther: fmt itself in native builds, a
// placeholder in the WebAssembly module, whose own messages never need it.

// Errorf builds a typed error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: sprintf(format, args...)}
}

type stringer interface{ String() string }

func sprintf(format string, args ...any) string {
	if s, ok := quickSprintf(format, args); ok {
		return s
	}
	return sprintfOther(format, args...)
}

// quickSprintf formats what it fully understands; ok is false otherwise.
func quickSprintf(format string, args []any) (string, bool) {
	b := make([]byte, 0, len(format)+16*len(args))
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+1 >= len(format) {
			return "", false
		}
		i++
		verb := format[i]
		if verb == '%' {
			b = append(b, '%')
			continue
		}
		if next >= len(args) {
			return "", false
		}
		var ok bool
		if b, ok = appendArg(b, verb, args[next], 0); !ok {
			return "", false
		}
		next++
	}
	if next != len(args) {
		return "", false
	}
	return string(b), true
}

// appendArg formats one argument under verb as fmt would.
func appendArg(b []byte, verb byte, a any, depth int) ([]byte, bool) {
	if depth > 8 {
		return b, false
	}
	var s string
	isString := true
	switch x := a.(type) {
	case string:
		s = x
	case PartType:
		s = string(x)
	case Role:
		s = string(x)
	case MessageState:
		s = string(x)
	case Visibility:
		s = string(x)
	case error:
		var ok bool
		if s, ok = safeString(x.Error); !ok {
			return b, false
		}
	case stringer:
		var ok bool
		if s, ok = safeString(x.String); !ok {
			return b, false
		}
	default:
		isString = false
	}
	if isString {
		switch verb {
		case 's', 'v':
			return append(b, s...), true
		case 'q':
			return strconv.AppendQuote(b, s), true
		case 'x':
			const digits = "0123456789abcdef"
			for i := 0; i < len(s); i++ {
				b = append(b, digits[s[i]>>4], digits[s[i]&15])
			}
			return b, true
		}
		return b, false
	}
	if verb != 'v' && verb != 'd' && verb != 'x' {
		return b, false
	}
	base := 10
	if verb == 'x' {
		base = 16
	}
	switch x := a.(type) {
	case int:
		return strconv.AppendInt(b, int64(x), base), true
	case int8:
		return strconv.AppendInt(b, int64(x), base), true
	case int16:
		return strconv.AppendInt(b, int64(x), base), true
	case int32:
		return strconv.AppendInt(b, int64(x), base), true
	case int64:
		return strconv.AppendInt(b, x, base), true
	case uint:
		return strconv.AppendUint(b, uint64(x), base), true
	case uint8:
		return strconv.AppendUint(b, uint64(x), base), true
	case uint16:
		return strconv.AppendUint(b, uint64(x), base), true
	case uint32:
		return strconv.AppendUint(b, uint64(x), base), true
	case uint64:
		return strconv.AppendUint(b, x, base), true
	}
	if verb != 'v' {
		return b, false
	}
	switch x := a.(type) {
	case nil:
		return append(b, "<nil>"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64), true
	case float32:
		return strconv.AppendFloat(b, float64(x), 'g', -1, 32), true
	case []byte:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendUint(b, uint64(e), 10)
		}
		return append(b, ']'), true
	case []string:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, e...)
		}
		return append(b, ']'), true
	case []any:
		b = append(b, '[')
		ok := true
		for i, e := range x {
			if i > 0 {
				b = append(b, ' ')
			}
			if e == nil { // fmt writes a nil element of a slice as <nil>
				b = append(b, "<nil>"...)
				continue
			}
			if b, ok = appendArg(b, 'v', e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		b = append(b, "map["...)
		ok := true
		for i, k := range msgp.SortedKeys(x) {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(append(b, k...), ':')
			if x[k] == nil {
				b = append(b, "<nil>"...)
				continue
			}
			if b, ok = appendArg(b, 'v', x[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// safeString calls a String or Error method; a panic in it (a nil
// receiver, say) leaves the argument to sprintfOther.
func safeString(f func() string) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return f(), true
}
