package api

import (
	"hash/maphash"

	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/synccore"
)

// elide.go sends a subscriber the texts of part and message frames without
// the beginning it was already sent (Frame.Kept, docs/protocol.md §4.5).
//
// Why: a streamed text reaches a subscriber as deltas, then twice more
// whole: in the part frame that ends it and in the message frame that
// commits it. For a 1 MB answer that was 2 MB more on the wire at its very
// end, which a browser receives, copies and hands to the core in the
// answer's last tasks. Only a subscriber that asked (?kept=1) gets this:
// an older client would take the cut text for the whole.
//
// The elider tracks, per streamed part, how many bytes of its text this
// subscription sent and a seeded hash of them; a frame's text is cut when
// its beginning hashes the same. The client checks that it holds exactly
// that many bytes, and resyncs otherwise.

// maxElidedParts bounds the parts tracked per subscription: past it the
// elider forgets them all (the next texts then go whole).
const maxElidedParts = 1024

type elider struct {
	seed  maphash.Seed
	parts map[partKey]*sentText
	// last is the part of the last lookup: a message's deltas come in runs
	// to one part, and a subscriber of a busy session is sent dozens per
	// WebSocket message, so most lookups skip the map and hashing the two
	// ids (BenchmarkEliderDeltas: 1.7x less per batch).
	lastKey partKey
	last    *sentText
}

type partKey struct{ message, part string }

// sentText is what this subscription sent of one part's text.
type sentText struct {
	n int
	h maphash.Hash
}

func newElider() *elider {
	return &elider{seed: maphash.MakeSeed(), parts: map[partKey]*sentText{}}
}

// frames rewrites frames in place (in the order they are sent). Their
// parts and messages are shared with other subscribers, so a cut text
// goes into a copy, and a frame it rewrote loses its shared encoding
// (shared[i] set to nil: it is this subscriber's own now).
func (e *elider) frames(fs []synccore.Frame, shared []*fanout.Shared) {
	for i := range fs {
		if e.frame(&fs[i]) && i < len(shared) {
			shared[i] = nil
		}
	}
}

// frame rewrites f, reporting whether it changed it.
func (e *elider) frame(f *synccore.Frame) bool {
	switch f.Kind {
	case synccore.FrameDelta:
		k := partKey{f.MessageID, f.PartID}
		s := e.get(k)
		switch {
		case s != nil && int64(s.n) == f.Offset:
			s.add(f.Text)
		case f.Offset == 0:
			e.track(k, f.Text)
		default:
			e.forget(k) // a base this subscription did not send
		}
	case synccore.FramePart:
		if !streamsText(f.Part) {
			return false
		}
		if n := e.cut(partKey{f.MessageID, f.Part.PartID}, f.Part.Text); n > 0 {
			p := *f.Part
			p.Text = p.Text[n:]
			f.Part = &p
			f.Kept = []synccore.KeptLen{{PartID: p.PartID, Len: int64(n)}}
			return true
		}
	case synccore.FrameMessage:
		m := f.Message
		var cut *synccore.Message
		for i := range m.Parts {
			p := &m.Parts[i]
			if !streamsText(p) {
				continue
			}
			k := partKey{m.MessageID, p.PartID}
			n := e.cut(k, p.Text)
			if m.Done() {
				e.forget(k) // a done message's texts change no more
			}
			if n == 0 {
				continue
			}
			if cut == nil {
				c := *m
				c.Parts = append([]synccore.Part(nil), m.Parts...)
				cut = &c
			}
			cut.Parts[i].Text = p.Text[n:]
			f.Kept = append(f.Kept, synccore.KeptLen{PartID: p.PartID, Len: int64(n)})
		}
		if cut != nil {
			f.Message = cut
			return true
		}
	}
	return false
}

// cut returns how many leading bytes of text this subscription sent as
// part k's text (0: none, or not a beginning of text), and records text as
// what it has now sent of part k.
func (e *elider) cut(k partKey, text string) int {
	s := e.get(k)
	if s == nil || s.n == 0 || s.n > len(text) || maphash.String(e.seed, text[:s.n]) != s.h.Sum64() {
		e.track(k, text)
		return 0
	}
	n := s.n
	s.add(text[n:])
	return n
}

// track starts part k's record over with text.
func (e *elider) track(k partKey, text string) {
	if len(e.parts) >= maxElidedParts {
		clear(e.parts)
	}
	s := &sentText{}
	s.h.SetSeed(e.seed)
	s.add(text)
	e.parts[k] = s
	e.lastKey, e.last = k, s
}

// get returns what this subscription sent of part k (nil: nothing tracked).
func (e *elider) get(k partKey) *sentText {
	if e.last != nil && k == e.lastKey {
		return e.last
	}
	s := e.parts[k]
	if s != nil {
		e.lastKey, e.last = k, s
	}
	return s
}

// forget drops part k's record.
func (e *elider) forget(k partKey) {
	delete(e.parts, k)
	if k == e.lastKey {
		e.last = nil
	}
}

func (s *sentText) add(text string) {
	s.n += len(text)
	_, _ = s.h.WriteString(text)
}

// streamsText reports whether p is a part whose text may stream.
func streamsText(p *synccore.Part) bool {
	return p.Type == synccore.PartText || p.Type == synccore.PartReasoning
}
