package synccore

// session.go handles the connection life cycle: start, reconnect timers,
// resynchronisation, include_internal and close (docs/protocol.md §6).

func (c *Client) onStart(ev *Event) error {
	c.sessionID = ev.SessionID
	c.limit = ev.PageLimit
	if c.limit == 0 {
		c.limit = DefaultPageLimit
	}
	c.limit = min(c.limit, MaxPageLimit)
	c.includeInternal = ev.IncludeInternal
	c.connect()
	return nil
}

// connect asks for a new subscription; frames restart at seq 1.
func (c *Client) connect() {
	c.lastSeq = 0
	c.buffered = nil
	c.setStatus(StatusConnecting, "")
	c.emit(Command{Type: CmdOpenSubscription, SessionID: c.sessionID})
}

// resync abandons the subscription: the view stays as it is (stale but
// whole), and a timer brings the client back through connect. serverAsked
// is a resync frame, whose first retry is immediate; closeSub asks the host
// to close the socket (a lost connection needs no close).
func (c *Client) resync(reason string, serverAsked, closeSub bool) {
	if closeSub {
		c.emit(Command{Type: CmdCloseSubscription, Reason: reason})
	}
	c.lastSeq = 0
	c.buffered = nil
	c.headReq, c.headPages = 0, nil
	c.attempt++
	attempt := c.attempt
	if serverAsked && attempt == 1 {
		attempt = 0
	}
	c.setStatus(StatusBackoff, reason)
	c.timer = c.newTimer()
	c.emit(Command{Type: CmdSetTimer, TimerID: c.timer, DelayMs: backoffDelay(attempt, c.jitter)})
}

// fail is resync for a broken stream: the error goes to the Output too.
func (c *Client) fail(err *Error) {
	c.streamErr = err
	c.resync(err.Code+": "+err.Message, false, true)
}

func (c *Client) onTimer(id uint64) {
	switch {
	case id == c.timer && c.status == StatusBackoff:
		c.timer = 0
		c.connect()
	case id == c.olderTimer:
		c.olderTimer = 0
		c.fetchOlder()
	}
	// Any other id is a timer the client no longer waits for: ignored.
}

func (c *Client) onClose() {
	if c.status == StatusConnecting || c.status == StatusSyncing || c.status == StatusLive {
		c.emit(Command{Type: CmdCloseSubscription, Reason: "closed by the host"})
	}
	c.timer, c.olderTimer, c.olderReq, c.headReq = 0, 0, 0, 0
	c.buffered, c.headPages, c.olderSeen = nil, nil, nil
	c.setStatus(StatusClosed, "")
}

// onSetInternal switches include_internal. The window is rebuilt from the
// head with the new setting (older history must be loaded again); until the
// new snapshot arrives the old window stays on screen.
func (c *Client) onSetInternal(on bool) {
	if on == c.includeInternal {
		return
	}
	c.includeInternal = on
	c.olderReq, c.olderTimer, c.olderAttempt, c.olderSeen = 0, 0, 0, nil
	switch c.status {
	case StatusIdle:
		return
	case StatusSyncing, StatusLive:
		c.resetWindow = true
		c.setStatus(StatusSyncing, "include_internal changed")
		c.fetchHead()
	default: // connecting, backoff: the next hello reads the head
		c.resetWindow = true
	}
}

// onLoadOlder asks for the page before the oldest message held.
func (c *Client) onLoadOlder() {
	if c.olderReq != 0 || c.olderTimer != 0 || !c.hasMoreOlder {
		return
	}
	c.olderAttempt = 0
	c.fetchOlder()
}

func (c *Client) fetchOlder() {
	before := c.nextBefore
	if len(c.win) > 0 {
		before = c.win[0].meta.Sequence
	}
	if before <= 1 {
		c.hasMoreOlder = false
		return
	}
	c.olderReq = c.newRequest()
	c.emit(Command{Type: CmdFetchPage, SessionID: c.sessionID, RequestID: c.olderReq,
		Limit: c.limit, BeforeSequence: before, IncludeInternal: c.includeInternal})
}

// fetchHead starts reading the snapshot from the head.
func (c *Client) fetchHead() {
	c.headPages = nil
	c.headTarget = 0
	if !c.resetWindow && len(c.win) > 0 {
		c.headTarget = c.win[len(c.win)-1].meta.Sequence + 1
		for _, e := range c.win {
			if !e.done() {
				c.headTarget = e.meta.Sequence
				break
			}
		}
	}
	c.fetchHeadPage(0)
}

func (c *Client) fetchHeadPage(before int64) {
	c.headBefore = before
	c.headReq = c.newRequest()
	c.emit(Command{Type: CmdFetchPage, SessionID: c.sessionID, RequestID: c.headReq,
		Limit: c.limit, BeforeSequence: before, IncludeInternal: c.includeInternal})
}
