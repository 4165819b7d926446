package api

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// search: GET /v1/search?q=&limit=&cursor=, the principal's messages
// matching q (docs/protocol.md §3 "Search").
func (a *api) search(w http.ResponseWriter, r *http.Request) {
	q, err := parseSearchParams(r.URL.Query())
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	q.Owner = principal(r.Context())
	page, err := a.mgr.Search(r.Context(), q)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out := httpwire.SearchResults{Items: make([]httpwire.SearchHit, 0, len(page.Items))}
	for _, h := range page.Items {
		out.Items = append(out.Items, httpwire.SearchHit{
			SessionID: h.SessionID, MessageID: h.MessageID, Sequence: h.Sequence, Role: string(h.Role),
			CreatedAt: h.CreatedAt, Snippet: h.Snippet, Title: h.Title,
		})
	}
	if page.NextCursor > 0 {
		out.NextCursor = strconv.FormatInt(page.NextCursor, 36)
	}
	a.writeValue(w, r, http.StatusOK, out)
}

// parseSearchParams validates q, limit (default 20, capped at 100) and
// cursor (a next_cursor this server gave).
func parseSearchParams(v url.Values) (store.SearchQuery, error) {
	q := store.SearchQuery{Text: v.Get("q"), Limit: store.DefaultSearchLimit}
	if _, err := store.SearchTerms(q.Text); err != nil {
		return q, err
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err != nil && isRange(err) && s[0] != '-':
			n = store.MaxSearchLimit
		case err != nil || n <= 0:
			return q, synccore.Errorf(synccore.CodeBadRequest, "limit must be a positive integer, got %q", s)
		}
		q.Limit = int(min(n, store.MaxSearchLimit))
	}
	if s := v.Get("cursor"); s != "" {
		n, err := strconv.ParseInt(s, 36, 64)
		if err != nil || n <= 0 {
			return q, synccore.Errorf(synccore.CodeBadRequest, "cursor %q is not a next_cursor of this API", s)
		}
		q.Cursor = n
	}
	return q, nil
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// windowPage is a page read around or after a sequence: a page with its
// newer side (store.WindowPage).
type windowPage struct {
	branchedPage
	HasNewer          bool  `json:"has_newer" msgpack:"has_newer"`
	NextAfterSequence int64 `json:"next_after_sequence,omitempty" msgpack:"next_after_sequence,omitempty"`
}

// getWindow answers GET .../messages with around_sequence or
// after_sequence.
func (a *api) getWindow(w http.ResponseWriter, r *http.Request, q store.PageQuery) {
	page, err := a.mgr.Window(r.Context(), r.PathValue("id"), q)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	if page.Items == nil {
		page.Items = []synccore.Message{}
	}
	for i := range page.Items {
		fillParts(&page.Items[i])
	}
	body, err := a.withBranches(r, r.PathValue("id"), page.MessagePage)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out := windowPage{HasNewer: page.HasNewer, NextAfterSequence: page.NextAfterSequence}
	switch b := body.(type) {
	case branchedPage:
		out.branchedPage = b
	default:
		out.MessagePage = page.MessagePage
	}
	a.writeValue(w, r, http.StatusOK, out)
}
