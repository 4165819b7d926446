package synccore

// changes_codec.go encodes and decodes Changes, the answer of
// agentsync_changes, with the same rules as every other shape (codec.go).

var (
	changesKeys = keyList("status", "total", "has_more_older", "next_before_sequence", "loading_older",
		"include_internal", "reset", "messages")
	messageChangeKeys = keyList("message_id", "message", "parts", "appends")
	partChangeKeys    = keyList("index", "part")
	textAppendKeys    = keyList("index", "text")
)

// EncodeChanges encodes ch as Client.AppendChangesBytes writes it.
func EncodeChanges(ch Changes) []byte {
	n := 0
	if ch.NextBeforeSequence != 0 {
		n++
	}
	if ch.Reset {
		n++
	}
	b := appendChangesHead(nil, &ch, n)
	b = appendString(b, "messages")
	if ch.Messages == nil {
		return appendNil(b)
	}
	b = appendArrayHeader(b, len(ch.Messages))
	for i := range ch.Messages {
		mc := &ch.Messages[i]
		w := beginMap(b)
		w.str("message_id", mc.MessageID)
		if mc.Message != nil {
			w.key("message")
			w.sub(appendMessage(w.b, mc.Message))
		}
		if len(mc.Parts) > 0 {
			w.key("parts")
			w.b = appendArrayHeader(w.b, len(mc.Parts))
			for j := range mc.Parts {
				pw := beginMap(w.b)
				pw.int("index", int64(mc.Parts[j].Index))
				pw.key("part")
				pw.sub(appendPart(pw.b, &mc.Parts[j].Part))
				w.sub(pw.end())
			}
		}
		if len(mc.Appends) > 0 {
			w.key("appends")
			w.b = appendArrayHeader(w.b, len(mc.Appends))
			for j := range mc.Appends {
				aw := beginMap(w.b)
				aw.int("index", int64(mc.Appends[j].Index))
				aw.str("text", mc.Appends[j].Text)
				w.sub(aw.end())
			}
		}
		b = mustEncodeStrict(w.end())
	}
	return b
}

// DecodeChanges decodes the answer of agentsync_changes.
func DecodeChanges(b []byte) (Changes, error) {
	var ch Changes
	// No interning table (DecodeView's): a take is usually one delta, and
	// the table would cost more than the few strings it holds.
	err := decodeWith(b, "changes", func(d *decoder) { d.changes(&ch) })
	if err != nil {
		return Changes{}, err
	}
	return ch, nil
}

func (d *decoder) changes(ch *Changes) {
	n, arr, _ := d.structLen(len(changesKeys))
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, changesKeys, i); string(k) {
		case "status":
			ch.Status = d.sharedString()
		case "total":
			ch.Total = d.i64()
		case "has_more_older":
			ch.HasMoreOlder = d.boolean()
		case "next_before_sequence":
			ch.NextBeforeSequence = d.i64()
		case "loading_older":
			ch.LoadingOlder = d.boolean()
		case "include_internal":
			ch.IncludeInternal = d.boolean()
		case "reset":
			ch.Reset = d.boolean()
		case "messages":
			ch.Messages = decodeList(d, d.messageChange)
		default:
			d.skip()
		}
	}
}

func (d *decoder) messageChange(mc *MessageChange) {
	n, arr, _ := d.structLen(len(messageChangeKeys))
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, messageChangeKeys, i); string(k) {
		case "message_id":
			mc.MessageID = d.string()
		case "message":
			if !d.isNil() {
				mc.Message = &Message{}
				d.message(mc.Message)
			}
		case "parts":
			mc.Parts = decodeList(d, func(pc *PartChange) {
				n, arr, _ := d.structLen(len(partChangeKeys))
				for i := 0; i < n && !d.bad; i++ {
					switch k := d.fieldKey(arr, partChangeKeys, i); string(k) {
					case "index":
						pc.Index = int(d.i64())
					case "part":
						d.part(&pc.Part)
					default:
						d.skip()
					}
				}
			})
		case "appends":
			mc.Appends = decodeList(d, func(ta *TextAppend) {
				n, arr, _ := d.structLen(len(textAppendKeys))
				for i := 0; i < n && !d.bad; i++ {
					switch k := d.fieldKey(arr, textAppendKeys, i); string(k) {
					case "index":
						ta.Index = int(d.i64())
					case "text":
						ta.Text = d.string()
					default:
						d.skip()
					}
				}
			})
		default:
			d.skip()
		}
	}
}

// decodeList decodes an array (nil stays nil) element by element.
func decodeList[T any](d *decoder, elem func(*T)) []T {
	if d.isNil() {
		return nil
	}
	n := d.arrayLen()
	if n < 0 || d.bad {
		return nil
	}
	out := make([]T, 0, min(n, 64))
	for range n {
		if d.bad {
			return nil
		}
		out = append(out, *new(T))
		elem(&out[len(out)-1])
	}
	return out
}

// HandleChanges is the answer of agentsync_handle_changes
// (Client.AppendHandleChanges), decoded.
type HandleChanges struct {
	Output  *Output  // nil: the Output only said to render one message
	Changes *Changes // nil: the client is broken or the handle unknown (Output says which)
}

// DecodeHandleChanges decodes the answer of AppendHandleChanges; the
// appends form comes back as the Changes it stands for.
func DecodeHandleChanges(b []byte) (HandleChanges, error) {
	var hc HandleChanges
	r := reader{b: b}
	if !r.skip() {
		return hc, Errorf(CodeMalformed, "handle_changes: not msgpack")
	}
	first, rest := b[:r.i], b[r.i:]
	if first[0] != 0xc0 {
		o, err := DecodeOutput(first)
		if err != nil {
			return hc, err
		}
		hc.Output = &o
	}
	if len(rest) == 0 || len(rest) == 1 && rest[0] == 0xc0 {
		return hc, nil // broken, or (the Output alone) an unknown handle
	}
	var ch Changes
	var err error
	if c := rest[0]; c&0xf0 == 0x90 || c == 0xdc || c == 0xdd {
		err = decodeWith(rest, "changes", func(d *decoder) { d.appends(&ch) })
	} else {
		ch, err = DecodeChanges(rest)
	}
	if err != nil {
		return hc, err
	}
	hc.Changes = &ch
	return hc, nil
}

// appends decodes the appends form (appendAppends) into the Changes it
// stands for: one MessageChange per run of appends to the same message.
func (d *decoder) appends(ch *Changes) {
	n := d.arrayLen()
	if d.bad || n < 4 || (n-4)%3 != 0 {
		d.fail("appends: an array of 4+3k values expected")
		return
	}
	ch.Status = d.string()
	ch.Total = d.i64()
	flags := d.i64()
	ch.HasMoreOlder = flags&AppendsHasMoreOlder != 0
	ch.LoadingOlder = flags&AppendsLoadingOlder != 0
	ch.IncludeInternal = flags&AppendsIncludeInternal != 0
	ch.NextBeforeSequence = d.i64()
	ch.Messages = []MessageChange{}
	for k := 0; k < (n-4)/3 && !d.bad; k++ {
		id := d.string()
		ta := TextAppend{Index: int(d.i64()), Text: d.string()}
		if last := len(ch.Messages) - 1; last >= 0 && ch.Messages[last].MessageID == id {
			ch.Messages[last].Appends = append(ch.Messages[last].Appends, ta)
		} else {
			ch.Messages = append(ch.Messages, MessageChange{MessageID: id, Appends: []TextAppend{ta}})
		}
	}
}
