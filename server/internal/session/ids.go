package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/agentsync/agentsync/synccore"
)

// newID is a random id with a readable prefix. Ids are server-made so no
// client can race another for one.
func newID(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than fail)
	return prefix + hex.EncodeToString(b[:])
}

// partID is unique within its message and says what the part is, as in
// "user-context:1" or "agent-tool:3".
func partID(role synccore.Role, t synccore.PartType, seq int64) string {
	return fmt.Sprintf("%s-%s:%d", role, t, seq)
}
