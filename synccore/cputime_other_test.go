//go:build !unix

package synccore

import "time"

func cpuNow() time.Duration { return 0 }
