//go:build !linux

package session

import "errors"

// residentBytes is only measured on Linux.
func residentBytes() (int64, error) { return 0, errors.New("resident set size: Linux only") }
