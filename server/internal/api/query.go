package api

import (
	"net/url"
	"strconv"

	"github.com/agentsync/agentsync/synccore"
)

// pageParams are the validated query parameters of messages().
type pageParams struct {
	Limit           int
	BeforeSequence  int64
	IncludeInternal bool
	// AroundSequence and AfterSequence read a window (store.Windower).
	AroundSequence int64
	AfterSequence  int64
}

// parsePageParams validates limit, before_sequence, around_sequence,
// after_sequence and include_internal as
// docs/protocol.md §3 says. An empty value counts as absent, so a client
// that always writes every key (`?limit=50&before_sequence=`) still works.
func parsePageParams(q url.Values) (pageParams, error) {
	p := pageParams{Limit: synccore.DefaultPageLimit}
	var err error
	if p.Limit, err = parseLimit(q); err != nil {
		return p, err
	}
	if v := q.Get("before_sequence"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return p, synccore.Errorf(synccore.CodeBadRequest, "before_sequence must be a positive integer, got %q", v)
		}
		p.BeforeSequence = n
	}
	for _, c := range []struct {
		name string
		dst  *int64
	}{{"around_sequence", &p.AroundSequence}, {"after_sequence", &p.AfterSequence}} {
		if v := q.Get(c.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return p, synccore.Errorf(synccore.CodeBadRequest, "%s must be a positive integer, got %q", c.name, v)
			}
			*c.dst = n
		}
	}
	if (p.BeforeSequence > 0 && p.AroundSequence > 0) || (p.BeforeSequence > 0 && p.AfterSequence > 0) || (p.AroundSequence > 0 && p.AfterSequence > 0) {
		return p, synccore.Errorf(synccore.CodeBadRequest, "before_sequence, around_sequence and after_sequence exclude one another")
	}
	if v := q.Get("include_internal"); v != "" {
		switch v {
		case "true", "1":
			p.IncludeInternal = true
		case "false", "0":
			p.IncludeInternal = false
		default:
			return p, synccore.Errorf(synccore.CodeBadRequest, "include_internal must be true, false, 1 or 0, got %q", v)
		}
	}
	return p, nil
}

// parseLimit reads limit: default 50, capped at 200, and 0, negatives or
// non-numbers are refused rather than silently replaced by the default.
func parseLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return synccore.DefaultPageLimit, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && v[0] != '-' {
			return synccore.MaxPageLimit, nil // a huge positive number is still "more than 200"
		}
		return 0, synccore.Errorf(synccore.CodeBadRequest, "limit must be a positive integer, got %q", v)
	}
	if n <= 0 {
		return 0, synccore.Errorf(synccore.CodeBadRequest, "limit must be at least 1, got %d", n)
	}
	if n > synccore.MaxPageLimit {
		return synccore.MaxPageLimit, nil
	}
	return int(n), nil
}
