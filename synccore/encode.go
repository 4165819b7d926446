package synccore

// encode.go sizes an encoder's buffer; the encoders themselves are
// generated (codec_gen.go).

// messageSize estimates the encoded size of m, so an encoder allocates its
// buffer once instead of growing it through every doubling (a streamed
// answer is often hundreds of KB of text).
func messageSize(m *Message) int {
	n := 160
	for i := range m.Parts {
		p := &m.Parts[i]
		n += 96 + len(p.Text) + len(p.Context) + len(p.URL) + len(p.Message)
		for _, v := range [...]any{p.Data, p.Input, p.Output, p.Request, p.Response} {
			if v != nil {
				n += 64
			}
		}
	}
	return n
}

func messagesSize(ms []Message) int {
	n := 64
	for i := range ms {
		n += messageSize(&ms[i])
	}
	return n
}
