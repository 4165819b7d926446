//go:build !wasm

package synccore

import "fmt"

// sprintfOther is fmt.Sprintf for what quickSprintf does not format: native
// builds link fmt anyway, so messages there are always exactly fmt's.
func sprintfOther(format string, args ...any) string { return fmt.Sprintf(format, args...) }
