package store

import (
	"context"
	"slices"

	"github.com/agentsync/agentsync/synccore"
)

// Window pages: a page read around a sequence (PageQuery.AroundSequence),
// for a client that opens a session scrolled to one message (a search
// hit), or the page after one (PageQuery.AfterSequence), to read newer
// messages from there. See docs/protocol.md §3 "messages()".

// WindowPage is a page with its newer side: HasNewer says that messages
// newer than its last item exist (of the page's visibility), and
// NextAfterSequence, set then, is the after_sequence that reads them.
type WindowPage struct {
	synccore.MessagePage
	HasNewer          bool
	NextAfterSequence int64
}

// Windower is the window part of a Store.
type Windower interface {
	// Window reads one page as Messages does, and also around or after a
	// sequence: q.AroundSequence > 0 reads the page centred on the first
	// message at or after it (of the page's visibility; a sequence past
	// the head is the head), q.Limit/2 older messages and the rest from it
	// on, shifted to stay full at either end of the path;
	// q.AfterSequence > 0 reads the oldest q.Limit messages with a
	// greater sequence. At most one of Before, Around and After is set
	// (CodeBadRequest otherwise). HasMore and NextBeforeSequence are the
	// older side as in Messages, HasNewer and NextAfterSequence the newer.
	Window(ctx context.Context, sessionID string, q PageQuery) (WindowPage, error)
}

// PathReader reads the rows of one session's path inside a store's
// snapshot, without their parts: Older the newest n with sequence < before
// (newest first), Newer the oldest n with sequence >= from (oldest
// first), both of the query's visibility.
type PathReader interface {
	Older(before int64, n int) ([]synccore.Message, error)
	Newer(from int64, n int) ([]synccore.Message, error)
}

// CheckWindow refuses a query with more than one cursor.
func CheckWindow(q PageQuery) error {
	n := 0
	for _, v := range []int64{q.BeforeSequence, q.AroundSequence, q.AfterSequence} {
		if v < 0 {
			return synccore.Errorf(synccore.CodeBadRequest, "a page cursor is negative")
		}
		if v > 0 {
			n++
		}
	}
	if n > 1 {
		return synccore.Errorf(synccore.CodeBadRequest, "before_sequence, around_sequence and after_sequence exclude one another")
	}
	return nil
}

// ReadWindow reads the page q asks of a path whose head is head, its items
// without parts (the store loads them, see Runs).
func ReadWindow(r PathReader, q PageQuery, total, head int64) (WindowPage, error) {
	if err := CheckWindow(q); err != nil {
		return WindowPage{}, err
	}
	limit := PageLimit(q.Limit)
	var older, newer []synccore.Message // older newest first, newer oldest first
	var err error
	nOlder, nNewer := limit, 0
	switch {
	case q.AroundSequence > 0:
		at := min(q.AroundSequence, max(head, 1))
		if older, err = r.Older(at, limit+1); err != nil {
			return WindowPage{}, err
		}
		if newer, err = r.Newer(at, limit+1); err != nil {
			return WindowPage{}, err
		}
		nOlder, nNewer = limit/2, limit-limit/2
		if len(newer) < nNewer {
			nOlder = limit - len(newer)
		}
		if len(older) < nOlder {
			nNewer = limit - len(older)
		}
	case q.AfterSequence > 0:
		if newer, err = r.Newer(q.AfterSequence+1, limit+1); err != nil {
			return WindowPage{}, err
		}
		nOlder, nNewer = 0, limit
		from := q.AfterSequence + 1
		if len(newer) > 0 {
			from = newer[0].Sequence
		}
		// One older row tells whether older messages remain.
		if older, err = r.Older(from, 1); err != nil {
			return WindowPage{}, err
		}
	default:
		if older, err = r.Older(PageBefore(q, head), limit+1); err != nil {
			return WindowPage{}, err
		}
		if q.BeforeSequence > 0 && q.BeforeSequence <= head {
			if newer, err = r.Newer(q.BeforeSequence, 1); err != nil {
				return WindowPage{}, err
			}
		}
	}
	nOlder, nNewer = min(nOlder, len(older)), min(nNewer, len(newer))
	items := make([]synccore.Message, 0, nOlder+nNewer)
	items = append(items, older[:nOlder]...)
	slices.Reverse(items)
	items = append(items, newer[:nNewer]...)
	page := WindowPage{MessagePage: synccore.MessagePage{Items: items, Total: total}}
	if n := len(items); n > 0 {
		page.StartSequence, page.EndSequence = items[0].Sequence, items[n-1].Sequence
	}
	if len(older) > nOlder {
		page.HasMore = true
		page.NextBeforeSequence = page.StartSequence
		if len(items) == 0 { // an after page past the newest: older ones from here
			page.NextBeforeSequence = q.AfterSequence + 1
		}
	}
	if len(newer) > nNewer {
		page.HasNewer = true
		page.NextAfterSequence = page.EndSequence
		if len(items) == 0 {
			page.NextAfterSequence = q.BeforeSequence - 1
		}
	}
	return page, nil
}

// SegmentReader is a PathReader over a path's segments (newest first),
// reading one segment's rows with the store's query: desc says newest
// first, and the rows are those with from <= sequence <= to, at most n.
type SegmentReader struct {
	Segs []Segment
	Rows func(sid, from, to int64, desc bool, n int) ([]synccore.Message, error)
}

// Older reads along the segments, newest first.
func (s SegmentReader) Older(before int64, n int) ([]synccore.Message, error) {
	var out []synccore.Message
	for _, seg := range Clip(s.Segs, 1, before-1) {
		if len(out) >= n {
			break
		}
		rows, err := s.Rows(seg.SID, seg.From, seg.To, true, n-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// Newer reads along the segments, oldest first.
func (s SegmentReader) Newer(from int64, n int) ([]synccore.Message, error) {
	var out []synccore.Message
	clipped := Clip(s.Segs, from, 1<<62)
	for i := len(clipped) - 1; i >= 0 && len(out) < n; i-- {
		seg := clipped[i]
		rows, err := s.Rows(seg.SID, seg.From, seg.To, false, n-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
