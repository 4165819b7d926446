package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// decode.go is the decoder the generated code (codec_gen.go) runs on:
// msgp's, plus this package's allocation policy for the lists of a page.

// decoder is msgp.Decoder with the part slab of a page.
type decoder struct {
	msgp.Decoder
	// partSlab is where the parts of a page's messages are cut from, a
	// few allocations per page instead of one per message; msgsLeft counts
	// the messages of the page still to read, to size it.
	partSlab []Part
	msgsLeft int
}

func newDecoder(b []byte) decoder { return decoder{Decoder: msgp.Decoder{R: msgp.Reader{Buf: b}}} }

// decodeWith runs fn over b, which must hold exactly one value.
func decodeWith(b []byte, what string, fn func(d *decoder)) error {
	if len(b) == 0 {
		return Errorf(CodeMalformed, "%s: empty input", what)
	}
	d := newDecoder(b)
	fn(&d)
	return d.finish(what)
}

// finish turns the decoder's state into the typed error of what, if any.
func (d *decoder) finish(what string) error {
	if err := d.Finish(what); err != nil {
		return &Error{Code: CodeMalformed, Message: err.Error()}
	}
	return nil
}

// listMessage reads a []Message: nil stays nil, [] is empty and non-nil.
func (d *decoder) listMessage() []Message {
	n := d.ArrayLen()
	if n < 0 || d.Failed() {
		return nil
	}
	// Every element takes at least a byte, so n is bounded by the input;
	// the capacity is bounded further so a lying header cannot make a
	// huge allocation.
	ms := make([]Message, 0, min(n, 256))
	for i := range n {
		if d.Failed() {
			return nil
		}
		d.msgsLeft = n - i
		ms = append(ms, Message{})
		d.decodeMessage(&ms[len(ms)-1])
	}
	d.msgsLeft, d.partSlab = 0, nil
	return ms
}

// listPart reads a []Part, cut from the page's slab inside a page.
func (d *decoder) listPart() []Part {
	n := d.ArrayLen()
	if n < 0 || d.Failed() {
		return nil
	}
	var ps []Part
	if d.msgsLeft > 1 && n > 0 && n <= 64 {
		if len(d.partSlab) < n {
			// Room for the rest of the page if its messages are like this
			// one, bounded (each part takes at least a byte of input).
			d.partSlab = make([]Part, max(n, min(n*d.msgsLeft, 256, len(d.R.Buf)-d.R.Pos)))
		}
		ps, d.partSlab = d.partSlab[:0:n], d.partSlab[n:]
	} else {
		ps = make([]Part, 0, min(n, 64))
	}
	for range n {
		if d.Failed() {
			return nil
		}
		ps = append(ps, Part{})
		d.decodePart(&ps[len(ps)-1])
	}
	return ps
}

// listString reads a []string: nil stays nil, [] is empty and non-nil.
func (d *decoder) listString() []string {
	n := d.ArrayLen()
	if n < 0 || d.Failed() {
		return nil
	}
	ss := make([]string, 0, min(n, 64))
	for range n {
		ss = append(ss, d.Str())
		if d.Failed() {
			return nil
		}
	}
	return ss
}
