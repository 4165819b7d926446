package bindings

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// SearchHit is one message API.Search found: its session (for a fork's
// shared prefix, the session it was written in), sequence and id, and an
// HTML snippet with the match in <mark> (SnippetText makes it plain).
type SearchHit = httpwire.SearchHit

// SearchResults is one page of hits, newest first; NextCursor, when set,
// is the Cursor of the next page.
type SearchResults = httpwire.SearchResults

// SearchOptions page a search: Limit (0: the server's 20; at most 100) and
// Cursor (a previous page's NextCursor).
type SearchOptions struct {
	Limit  int
	Cursor string
}

// Search finds the messages of the caller's sessions whose text holds
// every word of q (the last one also as a prefix), newest first
// (docs/protocol.md §3 "Search"). A q without a word is bad_request.
func (a *API) Search(ctx context.Context, q string, opts SearchOptions) (SearchResults, error) {
	v := url.Values{"q": {q}}
	if opts.Limit != 0 {
		v.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Cursor != "" {
		v.Set("cursor", opts.Cursor)
	}
	var out SearchResults
	err := a.do(ctx, http.MethodGet, "/v1/search", v, nil, &out)
	if out.Items == nil {
		out.Items = []SearchHit{}
	}
	return out, err
}

// SnippetText is a hit's snippet as plain text: the <mark> tags dropped
// and the rest unescaped.
func SnippetText(snippet string) string {
	return html.UnescapeString(strings.NewReplacer("<mark>", "", "</mark>", "").Replace(snippet))
}

// Window is a page read around or after a sequence: the page, and its
// newer side (HasNewer; NextAfterSequence reads on with MessagesAfter).
type Window struct {
	synccore.MessagePage
	HasNewer          bool
	NextAfterSequence int64
}

// MessagesAround reads the page of a session centred on sequence (the
// first message at or after it of the page's visibility; the head if it
// is past it): limit/2 older messages and the rest from it on, shifted to
// stay full at either end. Open a search hit with it.
func (a *API) MessagesAround(ctx context.Context, sessionID string, sequence int64, limit int, includeInternal bool) (Window, error) {
	return a.window(ctx, sessionID, "around_sequence", sequence, limit, includeInternal)
}

// MessagesAfter reads the oldest limit messages with a sequence greater
// than after: the page below a Window's, by its NextAfterSequence.
func (a *API) MessagesAfter(ctx context.Context, sessionID string, after int64, limit int, includeInternal bool) (Window, error) {
	return a.window(ctx, sessionID, "after_sequence", after, limit, includeInternal)
}

func (a *API) window(ctx context.Context, sessionID, key string, seq int64, limit int, includeInternal bool) (Window, error) {
	q := url.Values{key: {strconv.FormatInt(seq, 10)}}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if includeInternal {
		q.Set("include_internal", "true")
	}
	var raw rawBody
	if err := a.do(ctx, http.MethodGet, sessionPath(sessionID, "messages"), q, nil, &raw); err != nil {
		return Window{}, err
	}
	page, err := wire.DecodePage(raw)
	if err != nil {
		return Window{}, err
	}
	var newer struct {
		HasNewer          bool  `msgpack:"has_newer"`
		NextAfterSequence int64 `msgpack:"next_after_sequence"`
	}
	if err := msgpack.Unmarshal(raw, &newer); err != nil {
		return Window{}, synccore.Errorf(synccore.CodeMalformed, "window page: %v", err)
	}
	return Window{MessagePage: page, HasNewer: newer.HasNewer, NextAfterSequence: newer.NextAfterSequence}, nil
}
