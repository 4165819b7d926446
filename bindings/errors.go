package bindings

import (
	"errors"

	"github.com/agentsync/agentsync/synccore"
)

// errClosed is returned by a client used after Close.
var errClosed = synccore.Errorf(synccore.CodeClosed, "closed")

// isBroken reports whether err means the core must be rebuilt: its code is
// core_broken, and nothing else is (core.ErrBroken).
func isBroken(err error) bool { return errors.Is(err, synccore.ErrCoreBroken) }
