package synccore

import (
	"slices"
	"sort"
)

// pages.go applies messages() pages: the snapshot read from the head after a
// hello (one page, or back to the oldest message that is not done after a
// reconnect, §6.5), and older pages asked for by load_older.

func (c *Client) onPage(ev *Event) {
	switch ev.RequestID {
	case 0:
	case c.headReq:
		c.onHeadPage(ev)
	case c.olderReq:
		c.onOlderPage(ev)
	}
	// Any other request_id is unknown or superseded: ignored.
}

func (c *Client) onPageFailed(ev *Event) {
	c.setJitter(ev.Jitter)
	switch ev.RequestID {
	case 0:
	case c.headReq:
		c.resync("snapshot read failed: "+ev.Error, false, true)
	case c.olderReq:
		c.olderFailed()
	}
}

// pageOf decodes and validates the page of an event.
func pageOf(ev *Event) (MessagePage, error) {
	if ev.Page != nil {
		if err := validatePage(*ev.Page); err != nil {
			return MessagePage{}, err
		}
		// The host keeps its page: the window must not share its slices.
		p := *ev.Page
		p.Items = slices.Clone(p.Items)
		for i := range p.Items {
			p.Items[i].Parts = slices.Clone(p.Items[i].Parts)
		}
		return p, nil
	}
	return decodePage(ev.Data)
}

// visible drops internal messages a server sent although they were not
// asked for.
func (c *Client) visible(items []Message) []Message {
	if c.includeInternal || !slices.ContainsFunc(items, func(m Message) bool { return m.Visibility == VisibilityInternal }) {
		return items
	}
	return slices.DeleteFunc(slices.Clone(items), func(m Message) bool { return m.Visibility == VisibilityInternal })
}

func (c *Client) onHeadPage(ev *Event) {
	p, err := pageOf(ev)
	if err == nil {
		for i := range p.Items {
			if p.Items[i].SessionID != c.sessionID {
				err = Errorf(CodeMalformed, "page item %q belongs to session %q", p.Items[i].MessageID, p.Items[i].SessionID)
				break
			}
		}
	}
	if err != nil {
		c.fail(errf(err, "snapshot page"))
		return
	}
	p.Items = c.visible(p.Items)
	c.headPages = append(c.headPages, p)
	if c.headTarget > 0 && p.HasMore && p.NextBeforeSequence > 0 &&
		(c.headBefore == 0 || p.NextBeforeSequence < c.headBefore) && // always moving back
		(len(p.Items) == 0 || p.Items[0].Sequence > c.headTarget) {
		c.fetchHeadPage(p.NextBeforeSequence) // not back to the target yet
		return
	}
	c.headReq = 0
	c.applySnapshot()
	buffered := c.buffered
	c.buffered = nil
	// A snapshot read: the backoff starts over from the first attempt's
	// wait (§6.4), so owner changes on several nodes in a row, each with
	// a good read between them, never escalate it.
	c.attempt = min(c.attempt, 1)
	c.setStatus(StatusLive, "")
	for i := range buffered {
		c.applyFrame(&buffered[i])
		if c.status != StatusLive {
			return
		}
	}
}

// applySnapshot merges the pages read from the head into the window. A held
// message at the same or a higher revision is kept with its projection (a
// page never carries streamed text); anything newer replaces it.
func (c *Client) applySnapshot() {
	pages := c.headPages
	c.headPages = nil
	items := pages[0].Items // one page, the usual case: its items as they are
	if len(pages) > 1 {
		items = nil
		for i := len(pages) - 1; i >= 0; i-- {
			items = append(items, pages[i].Items...)
		}
		items = uniqueBySequence(items) // pages read at different times may overlap
	}
	head, oldest := pages[0], pages[len(pages)-1]
	c.total = head.Total

	if c.resetWindow || len(c.win) == 0 {
		old := c.byID
		c.win, c.byID = make([]*entry, 0, len(items)), make(map[string]*entry, len(items))
		c.winGen++
		var slab entrySlab
		if len(old) == 0 { // every entry is new: the first snapshot
			slab = make(entrySlab, len(items))
		}
		for i := range items {
			m := &items[i]
			if c.byID[m.MessageID] != nil {
				continue // an id twice in one page: a server bug, kept once
			}
			e := old[m.MessageID]
			if e == nil || e.meta.Revision < m.Revision {
				e = slab.newEntry(m)
			}
			c.win = append(c.win, e)
			c.byID[m.MessageID] = e
		}
		c.hasMoreOlder, c.nextBefore = oldest.HasMore, oldest.NextBeforeSequence
		c.resetWindow = false
		c.reset = true
		c.olderSeen = nil
		return
	}

	// A re-read after a reconnect: held messages older than the pages stay;
	// the pages cover the rest up to the head.
	var from int64 = 1 << 62
	if len(items) > 0 {
		from = items[0].Sequence
	}
	keep := 0
	for keep < len(c.win) && c.win[keep].meta.Sequence < from {
		keep++
	}
	if keep == 0 {
		c.hasMoreOlder, c.nextBefore = oldest.HasMore, oldest.NextBeforeSequence
	}
	win := slices.Clone(c.win[:keep])
	rest := c.win[keep:] // held messages the pages cover, by sequence
	for i := range items {
		m := &items[i]
		for len(rest) > 0 && rest[0].meta.Sequence < m.Sequence {
			win = append(win, rest[0]) // held but absent from the page: kept
			rest = rest[1:]
		}
		e := c.byID[m.MessageID]
		if e != nil && e.placed == c.gen {
			continue // an id twice in one page: a server bug, kept once
		}
		switch {
		case e == nil:
			e = newEntry(m)
			c.byID[m.MessageID] = e
			c.winGen++
			c.touch(e)
		case e.meta.Revision < m.Revision:
			e.setCommitted(m)
			c.touch(e)
		}
		if len(rest) > 0 && rest[0] == e {
			rest = rest[1:]
		}
		e.placed = c.gen
		win = append(win, e)
	}
	win = append(win, rest...)
	c.win = win
}

func (c *Client) onOlderPage(ev *Event) {
	p, err := pageOf(ev)
	if err != nil {
		c.streamErr = errf(err, "older page")
		c.olderFailed()
		return
	}
	c.olderReq, c.olderAttempt = 0, 0
	seen := c.olderSeen
	c.olderSeen = nil
	items := c.visible(p.Items)
	var oldest int64 = 1 << 62
	if len(c.win) > 0 {
		oldest = c.win[0].meta.Sequence
	}
	var add []*entry
	slab := make(entrySlab, len(items)) // the items skipped leave theirs unused
	for i := range items {
		m := &items[i]
		if m.Sequence >= oldest || c.byID[m.MessageID] != nil || m.SessionID != c.sessionID {
			continue // already held (the window moved) or not ours
		}
		if s := seen[m.MessageID]; s != nil && s.Revision > m.Revision {
			m = s // a revision committed after the page was read
		}
		e := slab.newEntry(m)
		c.byID[m.MessageID] = e
		c.winGen++
		add = append(add, e)
		c.touch(e)
	}
	c.win = append(add, c.win...)
	c.hasMoreOlder, c.nextBefore = p.HasMore, p.NextBeforeSequence
	c.total = max(c.total, p.Total)
}

// olderFailed schedules a retry of the older page with backoff.
func (c *Client) olderFailed() {
	c.olderReq = 0
	c.olderAttempt++
	c.olderTimer = c.newTimer()
	c.emit(Command{Type: CmdSetTimer, TimerID: c.olderTimer, DelayMs: backoffDelay(c.olderAttempt, c.jitter)})
}

// uniqueBySequence orders the items of several pages by sequence and keeps
// one message per sequence and per id (the highest revision), whatever a
// server's pages overlap: the window must stay ordered and duplicate-free.
func uniqueBySequence(items []Message) []Message {
	sort.Stable(pageOrder(items))
	out := items[:0]
	ids := make(map[string]bool, len(items)) // indexed only, never iterated
	for _, m := range items {
		if ids[m.MessageID] || (len(out) > 0 && out[len(out)-1].Sequence == m.Sequence) {
			continue
		}
		ids[m.MessageID] = true
		out = append(out, m)
	}
	return out
}

// pageOrder sorts messages by sequence, the highest revision first. (The
// sort package's one interface-based sort serves every sort of the core:
// each instance of the generic slices sorts cost the module ~15 KB.)
type pageOrder []Message

func (p pageOrder) Len() int      { return len(p) }
func (p pageOrder) Swap(i, j int) { p[i], p[j] = p[j], p[i] }
func (p pageOrder) Less(i, j int) bool {
	if p[i].Sequence != p[j].Sequence {
		return p[i].Sequence < p[j].Sequence
	}
	return p[i].Revision > p[j].Revision
}
