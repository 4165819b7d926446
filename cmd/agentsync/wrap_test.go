package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWrapCJKToCellWidth(t *testing.T) {
	t.Parallel()
	// 20 wide characters: 40 cells, no spaces, in lines of 10 cells.
	text := strings.Repeat("世界你好漢字", 4)[:60]
	lines := wrapLines(text, 10)
	want := []string{"世界你好漢", "字世界你好", "漢字世界你", "好漢字世界"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("wrapped %q, want %q", lines, want)
	}
	// An odd width leaves a cell free rather than splitting a character.
	for _, l := range wrapLines(text, 9) {
		if w := ansi.StringWidth(l); w != 8 {
			t.Errorf("line %q is %d cells at width 9, want 8", l, w)
		}
	}
	// Mixed: words break at spaces, CJK anywhere, combining marks take no cell.
	got := wrapLines("hello 世界 cafe\u0301 naïve 東京タワー end", 12)
	for _, l := range got {
		if w := ansi.StringWidth(l); w > 12 {
			t.Errorf("line %q is %d cells, over 12", l, w)
		}
	}
	if strings.Join(got, "|") != "hello 世界|cafe\u0301 naïve|東京タワー|end" {
		t.Errorf("wrapped %q", got)
	}
}

func TestWrapWordsAndNewlines(t *testing.T) {
	t.Parallel()
	got := wrapLines("the quick brown fox\n\njumps over   the lazy dog supercalifragilistic", 10)
	want := []string{"the quick", "brown fox", "", "jumps over", "the lazy", "dog", "supercalif", "ragilistic"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("wrapped %q, want %q", got, want)
	}
	if got := sanitize("a\x1b[31mred\tb\u009bc"); got != "a[31mred    bc" {
		t.Errorf("sanitize: %q", got)
	}
}

// TestWrapIncrementalEqualsWhole: appending a text in random pieces gives
// the lines wrapping it whole gives, at every step, with every line within
// the width and every non-space character kept in order.
func TestWrapIncrementalEqualsWhole(t *testing.T) {
	t.Parallel()
	words := []string{"lorem", "ipsum", "世界", "東京タワー", "café", "e\u0301", "a", "supercalifragilisticexpialidocious", "\n", "  ", "\t", "👍🏽", "naïve"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		width := 5 + rng.IntN(40)
		var b strings.Builder
		for range 60 {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		text := b.String()
		w := newWrapper(width)
		for pos, first := 0, true; pos < len(text); first = false {
			n := 1 + rng.IntN(12)
			pos = min(pos+n, len(text))
			for pos < len(text) && !isRuneStart(text[pos]) {
				pos++
			}
			if w.set(text[:pos]) && !first {
				t.Fatalf("round %d: an append started over", round)
			}
			whole := wrapLines(text[:pos], width)
			if got := w.strings(); strings.Join(got, "\x00") != strings.Join(whole, "\x00") {
				t.Fatalf("round %d width %d at %d: incremental %q, whole %q", round, width, pos, got, whole)
			}
		}
		lines := w.strings()
		for _, l := range lines {
			if cw := ansi.StringWidth(l); cw > width {
				t.Fatalf("round %d: line %q is %d cells, over %d", round, l, cw, width)
			}
		}
		if strip(strings.Join(lines, "")) != strip(sanitize(text)) {
			t.Fatalf("round %d: the lines lost characters", round)
		}
	}
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

func strip(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\t' {
			return -1
		}
		return r
	}, s)
}
