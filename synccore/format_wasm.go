//go:build wasm

package synccore

// sprintfOther in the WebAssembly module, which does not link fmt: the
// core's own messages never get here (quickSprintf formats them all); an
// unknown verb or argument type is written as a placeholder.
func sprintfOther(format string, args ...any) string {
	b := make([]byte, 0, len(format)+16)
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b = append(b, c)
			continue
		}
		i++
		for i < len(format) && !isVerb(format[i]) {
			i++ // flags, width, precision
		}
		if i >= len(format) {
			break
		}
		if format[i] == '%' {
			b = append(b, '%')
			continue
		}
		if next >= len(args) {
			b = append(b, "%!"+string(format[i])+"(MISSING)"...)
			continue
		}
		var ok bool
		if b, ok = appendArg(b, 'v', args[next], 0); !ok {
			b = append(b, "%!"+string(format[i])+"(?)"...)
		}
		next++
	}
	return string(b)
}

func isVerb(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '%' }
