package main

import "strings"

// target is what a row is held to: a bound on its figure, or on its ratio
// to the baseline, or only a note. Checking it in code is what lets the
// table mark a missed target instead of printing it beside the figure.
type target struct {
	Text    string  // as the table shows it
	Bound   float64 // in the row's unit, or a ratio when Ratio
	AtLeast bool    // the figure must be >= Bound (else <=)
	Ratio   bool    // Bound applies to figure / baseline figure
	Checked bool    // false: a note, nothing to miss
	// MaxRatio, when set, also holds figure / baseline figure to at most it.
	MaxRatio float64
}

func atMost(v float64, text string) target { return target{Text: text, Bound: v, Checked: true} }
func atLeast(v float64, text string) target {
	return target{Text: text, Bound: v, AtLeast: true, Checked: true}
}
func ratioAtMost(v float64, text string) target {
	return target{Text: text, Bound: v, Ratio: true, Checked: true}
}
func note(text string) target { return target{Text: text} }

// both holds the figure to at most v and its ratio to the baseline to at
// most ratio ("<=3 us, >=5x faster" is both(3000, 0.2, ...)).
func both(v, ratio float64, text string) target {
	return target{Text: text, Bound: v, Checked: true, MaxRatio: ratio}
}

// verdict is "ok", "MISSED", or "" when there is nothing to check (a note,
// or a ratio target whose baseline did not run).
func (t target) verdict(v, ratio float64, haveRatio bool) string {
	if !t.Checked {
		return ""
	}
	x := v
	if t.Ratio {
		if !haveRatio {
			return ""
		}
		x = ratio
	}
	if t.MaxRatio > 0 && (!haveRatio || ratio > t.MaxRatio) {
		return "MISSED"
	}
	if t.AtLeast && x >= t.Bound || !t.AtLeast && x <= t.Bound {
		return "ok"
	}
	return "MISSED"
}

// dimension is what a unit counts, so that only like figures are divided:
// gzip-bytes and raw-bytes are both bytes, idle-live-KB/viewer and
// KB/viewer both KB/viewer, fetch_ms and total_ms both ms. Any other pair
// must match exactly.
func dimension(unit string) string {
	if strings.HasSuffix(unit, "-bytes") {
		return "bytes"
	}
	if strings.HasSuffix(unit, "_ms") {
		return "ms"
	}
	if strings.HasSuffix(unit, "KB/viewer") {
		return "KB/viewer"
	}
	return unit
}
