package synccore

// entry.go is the client's copy of one message: its committed metadata and
// the parts of its streaming projection. Streaming text lives in a growable
// byte buffer per part, so a delta costs an append, whatever the part's
// length; strings are built only when the view or the message is read.

type entry struct {
	meta      Message    // committed metadata; meta.Parts is always nil
	parts     []livePart // the projection: committed parts, then streamed ones
	committed int        // how many leading parts belong to the committed revision
	mark      uint64     // the event generation that last marked it changed
}

type livePart struct {
	p   Part   // the part; p.Text is unused, see text()
	str string // the text as a string; valid while buf is nil or len(str) == len(buf)
	buf []byte // the growing text, created by the first delta
}

// text returns the part's text, building the string at most once per change.
func (lp *livePart) text() string {
	if lp.buf != nil && len(lp.str) != len(lp.buf) {
		lp.str = string(lp.buf)
	}
	return lp.str
}

// textLen is the UTF-8 byte length of the part's text, without building it.
func (lp *livePart) textLen() int {
	if lp.buf != nil {
		return len(lp.buf)
	}
	return len(lp.str)
}

// appendText appends a delta. The first append copies the text into a
// buffer with room to grow; later ones are amortised O(len(delta)).
func (lp *livePart) appendText(t []byte) {
	if lp.buf == nil {
		lp.buf = make([]byte, len(lp.str), max(2*len(lp.str), 64))
		copy(lp.buf, lp.str)
	}
	lp.buf = append(lp.buf, t...)
}

func newLivePart(p Part) livePart {
	lp := livePart{p: p, str: p.Text}
	lp.p.Text = ""
	return lp
}

// setCommitted replaces the entry's content with a committed revision and
// drops its projection.
func (e *entry) setCommitted(m *Message) {
	e.meta = *m
	e.meta.Parts = nil
	e.parts = make([]livePart, len(m.Parts))
	for i := range m.Parts {
		e.parts[i] = newLivePart(m.Parts[i])
	}
	e.committed = len(m.Parts)
}

func newEntry(m *Message) *entry {
	e := &entry{}
	e.setCommitted(m)
	return e
}

func (e *entry) done() bool { return e.meta.Done() }

// findPart returns the index of the part with the given id, or -1. It scans
// from the end: the part being streamed is almost always the last one.
func (e *entry) findPart(id string) int {
	for i := len(e.parts) - 1; i >= 0; i-- {
		if e.parts[i].p.PartID == id {
			return i
		}
	}
	return -1
}

// findPartBytes is findPart for an id that aliases input bytes; the
// comparison does not allocate.
func (e *entry) findPartBytes(id []byte) int {
	for i := len(e.parts) - 1; i >= 0; i-- {
		if e.parts[i].p.PartID == string(id) {
			return i
		}
	}
	return -1
}

// message builds the Message the host sees (a copy it owns, except for the
// `any` values of parts, which are shared and must be treated as read-only).
func (e *entry) message() Message {
	m := e.meta
	m.Parts = make([]Part, len(e.parts))
	for i := range e.parts {
		m.Parts[i] = e.parts[i].p
		m.Parts[i].Text = e.parts[i].text()
	}
	return m
}

// committedShape is the committed revision's identity for
// ValidateTransition: its metadata and its committed parts' ids and types.
func (e *entry) committedShape() Message {
	m := e.meta
	m.Parts = make([]Part, e.committed)
	for i := range e.committed {
		p := &e.parts[i].p
		m.Parts[i] = Part{PartID: p.PartID, Sequence: p.Sequence, Type: p.Type}
	}
	return m
}
