package scripted

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Scenario is a parsed `scenario:NAME key=value...` request.
type Scenario struct {
	Name string            // "tools" in "scenario:tools n=3"
	Args map[string]string // {"n": "3"} in "scenario:tools n=3"
}

// parseScenario reads a scenario from a user text; ok is false for anything
// else (which gets the default echo reply).
func parseScenario(text string) (Scenario, bool) {
	text = strings.TrimSpace(text)
	rest, ok := strings.CutPrefix(text, "scenario:")
	if !ok {
		return Scenario{}, false
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return Scenario{Name: "help"}, true
	}
	sc := Scenario{Name: strings.ToLower(fields[0]), Args: map[string]string{}}
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			sc.Args[strings.ToLower(k)] = v
		}
	}
	return sc, true
}

// Int reads an integer argument, clamped to [lo, hi]; def when absent or
// not a number.
func (s Scenario) Int(key string, def, lo, hi int) int {
	v, err := strconv.Atoi(s.Args[key])
	if err != nil {
		v = def
	}
	return max(lo, min(hi, v))
}

// Str reads a string argument, def when absent.
func (s Scenario) Str(key, def string) string {
	if v, ok := s.Args[key]; ok && v != "" {
		return v
	}
	return def
}

// Scenarios are the names the scripted model plays, with their help lines.
var Scenarios = []struct{ Name, Help string }{
	{"help", "this list"},
	{"text", "plain streamed text: chars=N (runes, default 400) delta=M (runes per delta, default 6)"},
	{"markdown", "an answer in markdown: headings, lists, code, a table, and raw HTML that must stay inert: delta=M"},
	{"reasoning", "reasoning, then text: chars=N delta=M"},
	{"tools", "a multi-step tool loop: get_weather, then calculator, then an answer: city=NAME"},
	{"approval", "a send_email call that needs approval; approve or deny it: to=ADDRESS"},
	{"question", "asks you a question through an interaction, then uses your answer"},
	{"error", "fails in the middle of the stream, and answers when retried: chars=N fails=K (takes that fail, default 1)"},
	{"long", "a very long answer: chars=N (default 100000) delta=M (default 16)"},
	{"data", "text with a structured data part (a small chart)"},
	{"file", "text with a file part (a data: URL)"},
	{"write", "writes a file with the write_file tool, which becomes a file part of the answer: name=NAME (default notes.md; a .png name writes a small image)"},
	{"files", "lists the files of your message as the model received them: images and PDFs with their bytes, text files as text, notes for files left out"},
	{"usage", "text and the token usage a real provider reports after a step (a usage data part): chars=N"},
}

// lorem is deterministic filler text of exactly n runes derived from seed.
// It mixes in a few multi-byte runes so byte offsets differ from rune counts.
// It ends on a whole word: when the next word does not fit, short words
// fill the runes left exactly (an answer that stops mid-word reads as cut).
func lorem(seed string, n int) string {
	words := []string{"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit",
		"sed", "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna",
		"aliqua", "café", "naïve", "déjà", "vu", "façade", "—", "über", "smörgåsbord"}
	h := hash(seed)
	var b strings.Builder
	b.Grow(n + n/8)
	count := 0
	for count < n {
		// xorshift: deterministic, no math/rand.
		h ^= h << 13
		h ^= h >> 17
		h ^= h << 5
		w := words[h%uint32(len(words))]
		if count > 0 {
			w = " " + w
		}
		size := utf8.RuneCountInString(w)
		if left := n - count - size; left < 0 || left == 1 {
			// No word fits in the one rune a space leaves: fill the end now.
			b.WriteString(loremEnd(n-count, count == 0))
			break
		}
		b.WriteString(w)
		count += size
	}
	return b.String()
}

// loremEnd is exactly left runes of whole words, each after a space unless
// first (then the first has none).
func loremEnd(left int, first bool) string {
	// fills[k] is a word of k runes (with its space: k-1 letters).
	fills := []string{2: " —", 3: " do", 4: " sit", 5: " amet", 6: " lorem", 7: " tempor", 8: " eiusmod"}
	var b strings.Builder
	if first {
		// The first word has no space: k runes is fills[k+1] without it,
		// leaving 0 or at least 2 runes for the words after it.
		k := min(left, 7)
		if left-k == 1 {
			k--
		}
		b.WriteString(fills[k+1][1:])
		left -= k
	}
	for left > 0 {
		k := min(left, 8)
		if left-k == 1 {
			k--
		}
		b.WriteString(fills[k])
		left -= k
	}
	return b.String()
}

// chunkLen is the byte length of the first n runes of s (all of s if it is
// shorter): deltas never split a rune.
func chunkLen(s string, n int) int {
	if n < 1 {
		n = 1
	}
	i := 0
	for runes := 0; i < len(s) && runes < n; runes++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}
