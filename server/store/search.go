package store

import (
	"context"
	"html"
	"strings"
	"unicode"

	"github.com/agentsync/agentsync/synccore"
)

// Search: full-text search over the messages of a principal's sessions.
//
// The index holds the text of every done, visible message (user and
// agent): its text parts, one after another. Reasoning, tool calls, files,
// data, context parts and internal messages are not indexed (they are not
// what a person reads as the conversation, and internal messages are
// never shown). A message enters the index in the transaction that
// commits it done, so it is searchable once that commit is; it leaves it
// with its session's rows. A message is indexed once, under the session
// whose rows hold it (the session it was written in): a fork's shared
// prefix is its parent's, so a hit there names the parent, which shows
// the message at the same sequence. A deleted session's messages are not
// found, a tombstone's (kept for its forks' paths) included.
//
// Both stores match the same way: the query's words (runs of letters and
// digits), each one a word of the message, case-insensitively, every word
// required; the last word also matches as a prefix (search as one types).
// Hits come newest first (the order they were indexed in).

// Searcher is the search part of a Store.
type Searcher interface {
	// Search finds the messages matching q.Text of the sessions q.Owner
	// owns or is a member of (Access), not deleted:
	// at most q.Limit hits (SearchLimit), newest first, after q.Cursor (a
	// previous page's NextCursor; 0 starts from the newest). A query with
	// no words is CodeBadRequest.
	Search(ctx context.Context, q SearchQuery) (SearchPage, error)
}

// SearchQuery is one search.
type SearchQuery struct {
	Owner  string
	Text   string
	Limit  int
	Cursor int64
}

// SearchHit is one message found: its session (the one whose rows hold
// it), sequence and id, and a snippet of its text around the match (see
// SnippetHTML). Key orders the hits (newest first) and is the cursor of
// the page ending with it.
type SearchHit struct {
	SessionID string
	MessageID string
	Sequence  int64
	Role      synccore.Role
	CreatedAt int64
	Snippet   string
	Title     string // the session's title
	Key       int64
}

// SearchPage is one page of hits; NextCursor is 0 when no more remain.
type SearchPage struct {
	Items      []SearchHit
	NextCursor int64
}

// Cut keeps the first limit hits of a page read with limit+1 (the one
// more says another page follows) and sets NextCursor to the last kept.
func (p *SearchPage) Cut(limit int) {
	if len(p.Items) > limit {
		p.Items = p.Items[:limit]
		p.NextCursor = p.Items[limit-1].Key
	}
}

// Search limits.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	MaxSearchTerms     = 16
	MaxSearchBytes     = 512
	// SnippetWords is about how many words a snippet holds.
	SnippetWords = 16
)

// SearchLimit applies Search's default and cap to limit.
func SearchLimit(limit int) int {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	return min(limit, MaxSearchLimit)
}

// Indexed says whether m belongs in the search index once done.
func Indexed(m *synccore.Message) bool {
	return m.Visibility == synccore.VisibilityVisible && m.Done()
}

// SearchText is the indexed text of a message: its text parts, in
// sequence order, separated by blank lines (NUL, which PostgreSQL's text
// cannot hold, made a space).
func SearchText(parts []synccore.Part) string {
	var b strings.Builder
	for i := range parts {
		if parts[i].Type != synccore.PartText || parts[i].Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(parts[i].Text)
	}
	s := b.String()
	return strings.ReplaceAll(s, "\x00", " ")
}

// SearchTerms splits a query into its words (runs of letters and digits),
// lower-cased: CodeBadRequest when it has none, more than MaxSearchTerms
// or more than MaxSearchBytes bytes.
func SearchTerms(q string) ([]string, error) {
	if len(q) > MaxSearchBytes {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "q is longer than %d bytes", MaxSearchBytes)
	}
	terms := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	switch {
	case len(terms) == 0:
		return nil, synccore.Errorf(synccore.CodeBadRequest, "q has no word to search for")
	case len(terms) > MaxSearchTerms:
		return nil, synccore.Errorf(synccore.CodeBadRequest, "q has more than %d words", MaxSearchTerms)
	}
	return terms, nil
}

// Snippet is the snippet of a hit, the same from both stores: about
// SnippetWords words of text from a little before its first matching word
// (a word equal to a term, or starting with the last one), as an HTML
// fragment: the text escaped (&, <, >, ", ') with runs of white space made
// one space, "…" where it is cut, and each matching word in
// <mark>...</mark>, nothing else.
func Snippet(text string, terms []string) string {
	type span struct{ from, to int }
	var words []span
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			words = append(words, span{start, i})
			start = -1
		}
	}
	if start >= 0 {
		words = append(words, span{start, len(text)})
	}
	match := func(w span) bool {
		word := strings.ToLower(text[w.from:w.to])
		for i, t := range terms {
			if word == t || (i == len(terms)-1 && strings.HasPrefix(word, t)) {
				return true
			}
		}
		return false
	}
	first := 0
	for i, w := range words {
		if match(w) {
			first = i
			break
		}
	}
	from := max(0, first-SnippetWords/4)
	to := min(len(words), from+SnippetWords)
	from = max(0, min(from, to-SnippetWords))
	if len(words) == 0 {
		return ""
	}
	var b strings.Builder
	text_ := func(s string) { b.WriteString(html.EscapeString(strings.Join(strings.Fields(s), " "))) }
	gap := func(s string) {
		if strings.TrimSpace(s) == "" {
			if s != "" {
				b.WriteByte(' ')
			}
			return
		}
		lead, trail := s[0] == ' ' || s[0] == '\n' || s[0] == '\t', strings.TrimRight(s, " \n\t\r") != s
		if lead {
			b.WriteByte(' ')
		}
		text_(s)
		if trail {
			b.WriteByte(' ')
		}
	}
	if from > 0 {
		b.WriteString("…")
	}
	for i := from; i < to; i++ {
		w := words[i]
		if i > from {
			gap(text[words[i-1].to:w.from])
		}
		if match(w) {
			b.WriteString("<mark>" + html.EscapeString(text[w.from:w.to]) + "</mark>")
		} else {
			b.WriteString(html.EscapeString(text[w.from:w.to]))
		}
	}
	if from == 0 {
		pre := text[:words[0].from]
		if strings.TrimSpace(pre) != "" {
			s := b.String()
			b.Reset()
			text_(pre)
			b.WriteString(s)
		}
	}
	if to < len(words) {
		b.WriteString("…")
	} else {
		text_(text[words[len(words)-1].to:])
	}
	return b.String()
}
