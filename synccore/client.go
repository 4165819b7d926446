package synccore

import (
	"bytes"
	"slices"
	"sort"
)

// Options configure a Client. The zero value is usable: every setting of a
// session (its id, page size, include_internal) comes with the start event.
type Options struct{}

// maxBuffered bounds the frames held while the snapshot is read. A server
// that outruns a stalled page read that far is better served by a resync.
const maxBuffered = 1 << 16

// Client is the sans-IO sync state machine of docs/protocol.md §6. It is not
// safe for concurrent use; a host serialises calls.
type Client struct {
	status          string
	sessionID       string
	limit           int
	includeInternal bool

	// The window: a contiguous run of the session's messages, by sequence.
	win          []*entry
	byID         map[string]*entry // indexed only, never iterated
	total        int64
	hasMoreOlder bool
	nextBefore   int64

	// The subscription.
	lastSeq  uint64  // seq of the last frame taken; 0 before the hello
	buffered []Frame // frames held while syncing, applied after the snapshot

	// The head read (status syncing).
	headReq     uint64        // the fetch_page in flight for the snapshot, 0 if none
	headPages   []MessagePage // pages read so far, newest first
	headTarget  int64         // read back until a page starts at or below it; 0: one page
	headBefore  int64         // before_sequence of the page in flight (0: the head)
	resetWindow bool          // the next snapshot replaces the window instead of merging

	// Older history.
	olderReq     uint64              // fetch_page in flight for load_older, 0 if none
	olderTimer   uint64              // retry timer after a failed older page, 0 if none
	olderAttempt int                 // consecutive older page failures
	olderSeen    map[string]*Message // message frames for messages older than the window, seen while loading older; indexed only

	// Reconnecting.
	timer   uint64 // the reconnect timer, 0 if none
	attempt int    // reconnect attempts since the client was last live and applied a frame
	jitter  int64  // the host's last jitter, defaultJitter if none

	nextReq, nextTimer uint64

	// winGen counts changes to byID; hot caches the entry of the last
	// delta's message while winGen stays hotGen (entryBytes).
	winGen, hotGen uint64
	hot            *entry

	// renderOne is the encoded Output of a single render of renderOneID.
	renderOne   []byte
	renderOneID string

	// Incremental render (changes.go): entries changed since the host's
	// last TakeChanges, and whether the whole list must be re-sent.
	dirty        []*entry
	changesReset bool
	// The compact append (changes_compact.go): the entry the host's last
	// take appended to, alone, and that take's scalars; nil after any
	// other take.
	compactTo   *entry
	compactHead viewScalars

	// Scratch of the event being handled.
	eventWinGen uint64 // winGen when the event began
	cmds        []Command
	ids         []string
	outBuf      []byte
	changed     []*entry
	reset       bool
	gen         uint64
	streamErr   *Error
}

// NewClient returns an idle client. Feed it an EvStart event to begin.
func NewClient(opts Options) *Client {
	return &Client{status: StatusIdle, byID: map[string]*entry{}, jitter: defaultJitter, changesReset: true}
}

// Handle applies one event and returns the commands for the host, in order.
//
// A rejected event (malformed, unknown, or not allowed in the current status)
// returns nil commands and a typed *Error, and leaves the state unchanged.
// A frames event whose stream turned out broken (a malformed frame, an error
// frame) is not rejected: the client resynchronises and returns both the
// resync commands and the *Error describing the failure, for the host's logs.
func (c *Client) Handle(ev Event) ([]Command, error) {
	if err := c.handle(&ev); err != nil {
		return nil, err
	}
	cmds := c.takeCommands()
	if c.streamErr != nil {
		return cmds, c.streamErr
	}
	return cmds, nil
}

// handleBytes is Handle over msgpack bytes: an Event in, an Output out (the
// commands, and the error if any). It never panics. The result is the
// caller's.
func (c *Client) handleBytes(event []byte) []byte {
	// Encode into the client's scratch buffer, then hand out an exact copy:
	// one allocation per event.
	c.outBuf = c.appendHandleBytes(c.outBuf[:0], event)
	return bytes.Clone(c.outBuf)
}

// appendHandleBytes is handleBytes appending the Output to dst, so a host
// that reuses its buffer (the WebAssembly module) handles a delta without
// allocating at all: garbage collection is dear in WebAssembly.
func (c *Client) appendHandleBytes(dst, event []byte) (out []byte) {
	defer func() {
		if p := recover(); p != nil {
			// core_broken, not internal: the host must tell a torn client
			// (rebuild it) from a server's internal error frame (resync).
			out = appendOutputOf(dst, nil, Errorf(CodeCoreBroken, "client panic: %v", p))
		}
	}()
	if b, ok := c.fastDelta(dst, event); ok {
		return b
	}
	// The event is read in place: its data aliases the input, and the
	// client copies what it keeps.
	var ev Event
	if err := decodeEventInPlace(event, &ev); err != nil {
		return appendOutputOf(dst, nil, asError(err))
	}
	if err := c.handle(&ev); err != nil {
		return appendOutputOf(dst, nil, asError(err))
	}
	cmds := c.finishCommands()
	if len(cmds) == 1 && c.streamErr == nil && cmds[0].Type == CmdRender && len(cmds[0].MessageIDs) == 1 {
		// The answer to almost every delta: render one message. Its bytes
		// are the same for every delta to that message.
		if id := cmds[0].MessageIDs[0]; id != c.renderOneID || len(c.renderOne) == 0 {
			c.renderOne = appendOutputOf(c.renderOne[:0], cmds, nil)
			c.renderOneID = id
		}
		return append(dst, c.renderOne...)
	}
	return appendOutputOf(dst, cmds, c.streamErr)
}

// handle runs one event through the transition table.
func (c *Client) handle(ev *Event) error {
	cl, ok := lookup(c.status, ev.Type)
	if !ok {
		return Errorf(CodeUnknownEvent, "unknown event type %q", ev.Type)
	}
	if err := checkEvent(ev); err != nil {
		return err
	}
	c.cmds, c.changed, c.reset, c.streamErr = c.cmds[:0], c.changed[:0], false, nil
	c.gen++
	c.eventWinGen = c.winGen
	switch cl.do {
	case doReject:
		return Errorf(CodeConflict, "event %s is not allowed while %s", ev.Type, c.status)
	case doClosedError:
		return Errorf(CodeClosed, "the client is closed")
	case doIgnore, doOpened:
		return nil
	case doStart:
		return c.onStart(ev)
	case doFrames:
		c.onFrames(ev.Data)
	case doPage:
		c.onPage(ev)
	case doPageFailed:
		c.onPageFailed(ev)
	case doLost:
		c.setJitter(ev.Jitter)
		reason := "connection lost"
		if ev.Error != "" {
			reason += ": " + ev.Error
		}
		c.resync(reason, false, false)
	case doTimer:
		c.onTimer(ev.TimerID)
	case doLoadOlder:
		c.onLoadOlder()
	case doSetInternal:
		c.onSetInternal(ev.IncludeInternal)
	case doClose:
		c.onClose()
	}
	return nil
}

// checkEvent refuses events whose fields are out of range, before anything
// changes.
func checkEvent(ev *Event) error {
	switch ev.Type {
	case EvStart:
		if ev.SessionID == "" {
			return Errorf(CodeBadRequest, "start: session_id is required")
		}
		if ev.PageLimit < 0 {
			return Errorf(CodeBadRequest, "start: page_limit %d is negative", ev.PageLimit)
		}
	case EvPage:
		if ev.RequestID == 0 {
			return Errorf(CodeBadRequest, "page: request_id is required")
		}
		if ev.Page == nil && len(ev.Data) == 0 {
			return Errorf(CodeMalformed, "page: neither data nor page given")
		}
	case EvPageFailed:
		if ev.RequestID == 0 {
			return Errorf(CodeBadRequest, "page_failed: request_id is required")
		}
	case EvTimerFired:
		if ev.TimerID == 0 {
			return Errorf(CodeBadRequest, "timer_fired: timer_id is required")
		}
	}
	if ev.Jitter < 0 || ev.Jitter > maxJitter {
		return Errorf(CodeBadRequest, "jitter %d is outside 0..%d", ev.Jitter, maxJitter)
	}
	return nil
}

func (c *Client) setJitter(j int64) {
	if j != 0 {
		c.jitter = j
	}
}

func (c *Client) emit(cmd Command) { c.cmds = append(c.cmds, cmd) }

func (c *Client) setStatus(s, reason string) {
	if c.status == s {
		return
	}
	c.status = s
	c.emit(Command{Type: CmdStatus, Status: s, Reason: reason})
}

func (c *Client) newRequest() uint64 { c.nextReq++; return c.nextReq }
func (c *Client) newTimer() uint64   { c.nextTimer++; return c.nextTimer }

// touch marks an entry as changed by the current event.
func (c *Client) touch(e *entry) {
	c.markDirty(e)
	if e.mark != c.gen {
		e.mark = c.gen
		c.changed = append(c.changed, e)
	}
}

// finishCommands appends the event's render command, if any, to c.cmds and
// returns it. Render always comes last: the host renders once per event,
// after every other command. The result is scratch owned by the client.
func (c *Client) finishCommands() []Command {
	switch {
	case c.reset:
		c.changesReset = true
		c.emit(Command{Type: CmdRender, Reset: true})
	case len(c.changed) > 0:
		if len(c.changed) > 1 {
			sort.Sort(bySequence(c.changed))
		}
		c.ids = c.ids[:0]
		same := c.winGen == c.eventWinGen // no entry left the window during the event
		for _, e := range c.changed {
			if same || c.byID[e.meta.MessageID] == e { // still in the window
				c.ids = append(c.ids, e.meta.MessageID)
			}
		}
		if len(c.ids) > 0 {
			c.emit(Command{Type: CmdRender, MessageIDs: c.ids})
		}
	}
	return c.cmds
}

// takeCommands is finishCommands with a result the caller owns. The common
// case of a delta (one render of one message) costs a single allocation.
func (c *Client) takeCommands() []Command {
	cmds := c.finishCommands()
	if len(cmds) == 1 && len(cmds[0].MessageIDs) == 1 {
		one := &struct {
			cmd [1]Command
			id  [1]string
		}{}
		one.cmd[0] = cmds[0]
		one.id[0] = cmds[0].MessageIDs[0]
		one.cmd[0].MessageIDs = one.id[:]
		return one.cmd[:]
	}
	out := make([]Command, len(cmds))
	copy(out, cmds)
	for i := range out {
		if out[i].MessageIDs != nil {
			out[i].MessageIDs = slices.Clone(out[i].MessageIDs)
		}
	}
	return out
}

// View returns the current view (a copy the caller owns; `any` values of
// parts are shared and read-only).
func (c *Client) View() View {
	msgs := c.messages()
	return View{
		SessionID:          c.sessionID,
		Status:             c.status,
		Messages:           msgs,
		Total:              c.total,
		HasMoreOlder:       c.hasMoreOlder,
		NextBeforeSequence: c.nextBefore,
		LoadingOlder:       c.olderReq != 0 || c.olderTimer != 0,
		IncludeInternal:    c.includeInternal,
		Digest:             digestMessages(msgs),
	}
}

func (c *Client) messages() []Message {
	msgs := make([]Message, len(c.win))
	for i, e := range c.win {
		msgs[i] = e.message()
	}
	return msgs
}

// viewBytes is the msgpack encoding of View.
func (c *Client) viewBytes() []byte { return encodeView(c.View()) }

// entryBytes is byID[string(id)] with a one-entry cache: deltas come in
// runs for one message, and hashing the id for a map lookup is a sizeable
// part of a delta's cost in WebAssembly.
func (c *Client) entryBytes(id []byte) *entry {
	if h := c.hot; h != nil && c.hotGen == c.winGen && h.meta.MessageID == string(id) {
		return h
	}
	e := c.byID[string(id)]
	c.hot, c.hotGen = e, c.winGen
	return e
}

// Message returns one message of the view by id (a copy the caller owns).
func (c *Client) Message(id string) (Message, bool) {
	e := c.byID[id]
	if e == nil {
		return Message{}, false
	}
	return e.message(), true
}

// messageBytes is the msgpack encoding of Message(id), nil if absent.
func (c *Client) messageBytes(id string) []byte {
	m, ok := c.Message(id)
	if !ok {
		return nil
	}
	return encodeMessage(m)
}

// Digest is the hex SHA-256 digest of the view's messages (digestMessages).
func (c *Client) Digest() string { return digestMessages(c.messages()) }

// Status is the connection status (one of the Status* constants).
func (c *Client) Status() string { return c.status }

// bySequence sorts entries by their message's sequence.
type bySequence []*entry

func (s bySequence) Len() int           { return len(s) }
func (s bySequence) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s bySequence) Less(i, j int) bool { return s[i].meta.Sequence < s[j].meta.Sequence }
