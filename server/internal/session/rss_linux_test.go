package session

import (
	"fmt"
	"os"
)

// residentBytes is this process's resident set size, from /proc.
func residentBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0, fmt.Errorf("parse /proc/self/statm: %w", err)
	}
	return resident * int64(os.Getpagesize()), nil
}
