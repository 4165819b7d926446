package synccore

import "slices"

// entry.go is the client's copy of one message: its committed metadata and
// the parts of its streaming projection. Text appended by deltas goes to a
// growable byte buffer per part, so a delta costs an append whatever the
// part's length; the string is built only when the view or message is read.

type entry struct {
	meta      Message  // committed metadata; meta.Parts is always nil
	parts     []Part   // the projection: committed parts, then streamed ones; Text is the text as last built
	tails     [][]byte // per part, text appended by deltas since its Text was built (grown lazily)
	committed int      // how many leading parts belong to the committed revision
	mark      uint64   // the event generation that last marked it changed
	placed    uint64   // the event generation that last placed it in a merged window

	// What the host holds of it (changes.go): nothing yet or a stale whole
	// (hostFull), else per part the text length it holds, -1 for a part
	// replaced since. Parts beyond len(hostLen) are new to the host.
	hostFull bool
	hostLen  []int
	dirty    bool // listed in Client.dirty
	// kept names the parts of a committed revision that replaced a message
	// the host held whose text begins with what the host holds: the whole
	// message it is sent goes without those beginnings
	// (MessageChange.KeptTexts).
	kept []keptText
	// partKept is, per part a part frame replaced since the host's take
	// (hostLen -1), how many bytes of its text the host still holds, or 0:
	// the new part's text began with them (PartChange.KeptText).
	partKept []int
}

// text returns part i's text. Deltas since the last read are folded into
// Text once, so a read costs one copy and later reads none.
func (e *entry) text(i int) string {
	if i < len(e.tails) && len(e.tails[i]) > 0 {
		e.parts[i].Text += string(e.tails[i])
		e.tails[i] = e.tails[i][:0]
	}
	return e.parts[i].Text
}

// textLen is the UTF-8 byte length of part i's text, without building it.
func (e *entry) textLen(i int) int {
	n := len(e.parts[i].Text)
	if i < len(e.tails) {
		n += len(e.tails[i])
	}
	return n
}

// appendText appends a delta to part i: an amortised append to its tail
// buffer, whatever the length of the text before it (nothing is copied).
func (e *entry) appendText(i int, t []byte) {
	e.kept = e.kept[:0] // the host's copy of the texts is no longer the text
	for len(e.tails) <= i {
		e.tails = append(e.tails, nil)
	}
	if e.tails[i] == nil {
		e.tails[i] = make([]byte, 0, max(256, 2*len(t)))
	}
	e.tails[i] = append(e.tails[i], t...)
}

// setPart replaces part i (a part frame carries the whole part).
func (e *entry) setPart(i int, p *Part) {
	e.kept = e.kept[:0]
	held := e.heldLen(i)
	if e.hostFull || held <= 0 || p.PartID != e.parts[i].PartID || !e.beginsWithHeld(i, p.Text, held) {
		held = 0
	}
	e.parts[i] = *p
	if i < len(e.hostLen) {
		e.hostLen[i] = -1
		for len(e.partKept) <= i {
			e.partKept = append(e.partKept, 0)
		}
		e.partKept[i] = held
	}
	if i < len(e.tails) {
		e.tails[i] = e.tails[i][:0]
	}
}

// setCommitted replaces the entry's content with a committed revision and
// drops its projection. The entry takes m.Parts: m must be the client's own
// (decoded by it, or cloned from the host's).
func (e *entry) setCommitted(m *Message) {
	e.noteKept(m)
	e.partKept = e.partKept[:0]
	e.meta = *m
	e.meta.Parts = nil
	e.parts = m.Parts
	e.tails = nil
	e.committed = len(m.Parts)
	e.hostFull = true
}

// noteKept records which parts of m, the committed revision about to
// replace e, begin with the text the host holds of them (see kept): a long
// answer's commit then costs its host no second copy of the text, only
// what it had not taken yet. Only an entry the host holds part by part
// qualifies, and only parts the host holds as they are: one a part frame
// replaced since the host's take (hostLen -1) goes whole.
func (e *entry) noteKept(m *Message) {
	e.kept = e.kept[:0]
	if e.hostFull || len(e.hostLen) == 0 {
		return
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		j := e.findPart(p.PartID)
		if j < 0 || j >= len(e.hostLen) {
			continue
		}
		if held := e.heldLen(j); held > 0 && e.beginsWithHeld(j, p.Text, held) {
			e.kept = append(e.kept, keptText{p.PartID, held})
		}
	}
}

// heldLen is how many bytes of part i's text the host holds: as it took
// them, or the part a part frame replaced since began with them
// (partKept); 0 when it holds none or not a prefix of the part.
func (e *entry) heldLen(i int) int {
	if i >= len(e.hostLen) {
		return 0
	}
	if n := e.hostLen[i]; n >= 0 {
		return n
	}
	return e.partKeptAt(i)
}

func (e *entry) partKeptAt(i int) int {
	if i < len(e.partKept) {
		return e.partKept[i]
	}
	return 0
}

// beginsWithHeld reports whether text begins with the first held bytes of
// part i's text (which the host holds): the built Text, then the tail.
func (e *entry) beginsWithHeld(i int, text string, held int) bool {
	if held > len(text) || held > e.textLen(i) {
		return false
	}
	built := e.parts[i].Text
	if len(built) > held {
		built = built[:held]
	}
	var tail []byte
	if i < len(e.tails) {
		tail = e.tails[i]
	}
	rest := text[len(built):held]
	return text[:len(built)] == built && string(tail[:len(rest)]) == rest
}

// keptText is a part whose first held bytes the host holds (entry.kept).
type keptText struct {
	partID string
	held   int
}

func newEntry(m *Message) *entry {
	e := &entry{}
	e.setCommitted(m)
	return e
}

// entrySlab hands out the entries of a page's new messages from one
// allocation instead of one each (a snapshot of 200 messages saved 199).
// The slab lives as long as the window holds any of its entries.
type entrySlab []entry

func (s *entrySlab) newEntry(m *Message) *entry {
	if len(*s) == 0 {
		return newEntry(m)
	}
	e := &(*s)[0]
	*s = (*s)[1:]
	e.setCommitted(m)
	return e
}

func (e *entry) done() bool { return e.meta.Done() }

// findPart returns the index of the part with the given id, or -1. It scans
// from the end: the part being streamed is almost always the last one.
func (e *entry) findPart(id string) int {
	for i := len(e.parts) - 1; i >= 0; i-- {
		if e.parts[i].PartID == id {
			return i
		}
	}
	return -1
}

// findPartBytes is findPart for an id that aliases input bytes; the
// comparison does not allocate.
func (e *entry) findPartBytes(id []byte) int {
	for i := len(e.parts) - 1; i >= 0; i-- {
		if e.parts[i].PartID == string(id) {
			return i
		}
	}
	return -1
}

// message builds the Message the host sees (a copy it owns, except for the
// `any` values of parts, which are shared and must be treated as read-only).
func (e *entry) message() Message {
	m := e.meta
	for i := range e.tails {
		e.text(i)
	}
	m.Parts = slices.Clone(e.parts)
	if m.Parts == nil {
		m.Parts = []Part{}
	}
	return m
}

// committedShape is the committed revision's identity for
// validateTransition: its metadata and its committed parts' ids and types.
func (e *entry) committedShape() Message {
	m := e.meta
	m.Parts = make([]Part, e.committed)
	for i := range e.committed {
		p := &e.parts[i]
		m.Parts[i] = Part{PartID: p.PartID, Sequence: p.Sequence, Type: p.Type}
	}
	return m
}
