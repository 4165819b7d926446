package main

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// tabWidth is the cells a tab takes (sanitize writes it as spaces).
const tabWidth = 4

// span is one wrapped line: text[start:end] of the wrapped text.
type span struct {
	start, end int
	// soft: the line starts where a line was broken (not at a newline or
	// the text's start), so spaces at its start are dropped.
	soft bool
}

// wrapper word-wraps a plain text that only grows (a streamed part) to a
// cell width, incrementally: greedy wrapping decides a line's end from the
// text before the next line's start, so every line but the last is final,
// and an append re-wraps from the start of the last line only. Widths are
// counted per grapheme cluster with the terminal's measure (x/ansi, the one
// lipgloss uses): an East Asian wide character takes two cells, a combining
// mark none, and a line never holds more than width cells.
type wrapper struct {
	width int
	text  string
	lines []span
	soft  bool
}

func newWrapper(width int) *wrapper {
	if width < 1 {
		width = 1
	}
	return &wrapper{width: width}
}

// set wraps text: incrementally when it extends the text wrapped before,
// from scratch otherwise. It reports whether it started over.
func (w *wrapper) set(text string) (restarted bool) {
	if len(text) == len(w.text) && text == w.text {
		return false
	}
	from := 0
	if len(w.lines) > 0 && len(text) > len(w.text) && strings.HasPrefix(text, w.text) {
		last := w.lines[len(w.lines)-1]
		from = last.start
		w.soft = last.soft
		w.lines = w.lines[:len(w.lines)-1]
	} else {
		w.lines = w.lines[:0]
		restarted = true
	}
	w.text = text
	soft := false
	if !restarted {
		soft = w.soft
	}
	w.lines = wrapFrom(w.lines, text, from, soft, w.width)
	return restarted
}

// line is wrapped line i, sanitized for the terminal.
func (w *wrapper) line(i int) string {
	s := w.lines[i]
	return sanitize(w.text[s.start:s.end])
}

// strings is every wrapped line, sanitized.
func (w *wrapper) strings() []string {
	out := make([]string, len(w.lines))
	for i := range w.lines {
		out[i] = w.line(i)
	}
	return out
}

// wrapLines wraps text to width in one go.
func wrapLines(text string, width int) []string {
	w := newWrapper(width)
	w.set(text)
	return w.strings()
}

// wrapFrom appends to lines the greedy wrap of text[from:], where from is
// the start of a line. A line breaks at a newline, after the last space
// that keeps it within width, around a wide character (CJK text has no
// spaces), or, in a word longer than the line, at the width. Spaces where
// a line breaks are dropped; an empty text is one empty line.
func wrapFrom(lines []span, text string, from int, soft bool, width int) []span {
	start := from
	cells := 0
	brk, brkEnd := -1, -1 // a break: the line ends at brkEnd, the next starts at brk
	i := from
	for i < len(text) {
		c := text[i]
		var g string
		var gw int
		switch {
		case c == '\n':
			lines = append(lines, span{start, trimEnd(text, start, i), soft})
			i++
			start, cells, brk, soft = i, 0, -1, false
			continue
		case c == '\t':
			g, gw = "\t", tabWidth
		case c < 0x20 || c == 0x7f:
			g, gw = text[i:i+1], 0
		case c < 0x80:
			g, gw = text[i:i+1], 1
		default:
			g, gw = ansi.FirstGraphemeCluster(text[i:], ansi.GraphemeWidth)
			if len(g) == 0 {
				g, gw = text[i:i+1], 0
			}
		}
		space := c == ' ' || c == '\t'
		if space && soft && i == start {
			i++
			start = i
			continue
		}
		if cells+gw > width && i > start {
			switch {
			case space:
				// Break here; the spaces go with the break.
				lines = append(lines, span{start, trimEnd(text, start, i), soft})
				start = i
			case brk > start:
				lines = append(lines, span{start, brkEnd, soft})
				start = brk
			default:
				lines = append(lines, span{start, i, soft})
				start = i
			}
			soft = true
			// Every line is wrapped from a fresh state at its start, so
			// wrapping again from a line's start gives the same lines.
			i, cells, brk = start, 0, -1
			continue
		}
		if gw == 2 && i > start {
			// A wide character may start the next line.
			brk, brkEnd = i, i
		}
		cells += gw
		i += len(g)
		if space {
			brk, brkEnd = i, trimEnd(text, start, i)
		} else if gw == 2 {
			brk, brkEnd = i, i
		}
	}
	return append(lines, span{start, len(text), soft})
}

// trimEnd is end moved back over the spaces before it, not before start.
func trimEnd(text string, start, end int) int {
	for end > start && (text[end-1] == ' ' || text[end-1] == '\t') {
		end--
	}
	return end
}

// sanitize makes a model's or user's text safe to print: tabs become
// spaces, and control characters (C0, DEL, C1: the escape sequences a text
// could carry to the terminal) are dropped.
func sanitize(s string) string { return clean(s, false) }

// sanitizeText is sanitize keeping newlines (a markdown source).
func sanitizeText(s string) string { return clean(s, true) }

func clean(s string, newlines bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && !(newlines && c == '\n')) || c == 0x7f || c == 0xc2 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r == '\n' && newlines:
			b.WriteByte('\n')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
