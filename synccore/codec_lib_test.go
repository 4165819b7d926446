package synccore

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore/internal/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

// codec_lib_test.go: the hand-written codec agrees with msgpack/v5, the
// library the rest of the kit (the server, the Go hosts) encodes with, in
// both directions: on random values the hand encoder writes the library's
// bytes, and on the library's bytes (and on odd but valid encodings of
// them) the hand decoder gives the library's values.

// shapes are the protocol's structs, each with its hand decoder.
type shape struct {
	name   string
	newPtr func() any
	decode func(b []byte) (any, error)
	encode func(v any) ([]byte, error)
}

var shapes = []shape{
	{"event", func() any { return new(Event) },
		func(b []byte) (any, error) { v, err := decodeEvent(b); return &v, err },
		func(v any) ([]byte, error) { return appendEvent(nil, v.(*Event)) }},
	{"frame", func() any { return new(Frame) },
		func(b []byte) (any, error) {
			var f Frame
			err := decodeWith(b, "frame", func(d *decoder) { d.decodeFrame(&f) })
			return &f, err
		},
		func(v any) ([]byte, error) { return appendFrame(nil, v.(*Frame)) }},
	{"page", func() any { return new(MessagePage) },
		func(b []byte) (any, error) {
			var p MessagePage
			err := decodeWith(b, "page", func(d *decoder) { d.decodeMessagePage(&p) })
			return &p, err
		},
		func(v any) ([]byte, error) { return appendMessagePage(nil, v.(*MessagePage)) }},
	{"message", func() any { return new(Message) },
		func(b []byte) (any, error) { v, err := decodeMessage(b); return &v, err },
		func(v any) ([]byte, error) { return appendMessage(nil, v.(*Message)) }},
	{"output", func() any { return new(Output) },
		func(b []byte) (any, error) { v, err := decodeOutput(b); return &v, err },
		nil}, // appendOutput writes nil commands as []: see TestOutputMatchesLibrary
	{"changes", func() any { return new(Changes) },
		func(b []byte) (any, error) { v, err := decodeChanges(b); return &v, err },
		func(v any) ([]byte, error) { return encodeChanges(*v.(*Changes)), nil }},
	{"view", func() any { return new(View) },
		func(b []byte) (any, error) { v, err := decodeView(b); return &v, err },
		func(v any) ([]byte, error) { return appendView(nil, v.(*View)) }},
}

// gen makes random values of every shape, `any` values included.
type gen struct{ r *rand.Rand }

func (g gen) n(k int) int { return g.r.Intn(k) }

func (g gen) str() string {
	words := []string{"", "", "a", "text", "done", "streaming", "héllo", "s1", "m1", "p1", "tool", "user",
		string(bytes.Repeat([]byte("x"), 31)), string(bytes.Repeat([]byte("y"), 32)),
		string(bytes.Repeat([]byte("z"), 300)), string(bytes.Repeat([]byte("w"), 70000))}
	w := words[g.n(len(words))]
	if len(w) > 1000 && g.n(4) != 0 {
		return "long"
	}
	return w
}

func (g gen) i64() int64 {
	switch g.n(8) {
	case 0:
		return 0
	case 1:
		return int64(g.n(128))
	case 2:
		return -int64(g.n(40))
	case 3:
		return g.r.Int63n(1 << 20)
	case 4:
		return -g.r.Int63n(1 << 40)
	case 5:
		return math.MaxInt64
	case 6:
		return math.MinInt64
	}
	return g.r.Int63()
}

func (g gen) u64() uint64 {
	if g.n(5) == 0 {
		return math.MaxUint64 - uint64(g.n(3))
	}
	return uint64(g.i64()) & (1<<uint(g.n(64)) - 1)
}

type tagged struct {
	Path   string         `msgpack:"path"`
	N      int            `msgpack:"n,omitempty"`
	Skip   string         `msgpack:"-"`
	Nested *tagged        `msgpack:"nested,omitempty"`
	Bytes  []byte         `msgpack:"bytes"`
	M      map[string]any `msgpack:"m,omitempty"`
	Plain  float32
	//lint:ignore U1000 an unexported field the codecs must skip
	hidden int
}

func (g gen) value(depth int) any {
	k := g.n(24)
	if depth > 3 && k >= 16 {
		k = g.n(16)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return g.n(2) == 0
	case 2:
		return g.str()
	case 3:
		return []byte(g.str())
	case 4:
		return int8(g.i64())
	case 5:
		return int16(g.i64())
	case 6:
		return int32(g.i64())
	case 7:
		return g.i64()
	case 8:
		return int(g.i64())
	case 9:
		return uint8(g.u64())
	case 10:
		return uint16(g.u64())
	case 11:
		return uint32(g.u64())
	case 12:
		return g.u64()
	case 13:
		return float32(g.r.NormFloat64())
	case 14:
		return []float64{0, 1, -2.5, math.Inf(1), 1e300}[g.n(5)]
	case 15:
		return time.Unix(g.r.Int63n(1<<36)-1<<35, int64(g.n(1e9))*int64(g.n(2)))
	case 16, 17:
		s := make([]any, g.n(4))
		for i := range s {
			s[i] = g.value(depth + 1)
		}
		if g.n(8) == 0 {
			return []any(nil)
		}
		return s
	case 18, 19:
		m := map[string]any{}
		for range g.n(5) {
			m[g.str()] = g.value(depth + 1)
		}
		return m
	case 20:
		return []string{g.str(), g.str()}
	case 21:
		return map[string]string{g.str(): g.str(), g.str(): g.str()}
	case 22:
		t := &tagged{Path: g.str(), N: int(g.i64() % 3), Skip: "x", Bytes: []byte(g.str()), Plain: 1.5}
		if g.n(2) == 0 {
			t.Nested = &tagged{Path: "in"}
		}
		if g.n(2) == 0 {
			t.M = map[string]any{"k": g.value(depth + 1)}
		}
		return *t
	}
	return map[string]int{g.str(): int(g.i64())} // one key: msgpack/v5 does not sort these
}

func (g gen) part() Part {
	p := Part{PartID: g.str(), Sequence: g.i64(), Type: PartType(g.str())}
	p.State = PartState(g.str())
	for _, s := range []*string{&p.StepID, &p.Text, &p.Tag, &p.Context, &p.URL, &p.MediaType,
		&p.Filename, &p.DataType, &p.DataID, &p.ToolCallID, &p.ToolName, &p.InteractionID, &p.Status,
		&p.ActionID, &p.ActionType, &p.Title, &p.Scope, &p.Code, &p.Message} {
		if g.n(3) == 0 {
			*s = g.str()
		}
	}
	for _, a := range []*any{&p.Data, &p.Input, &p.Output, &p.Request, &p.Response} {
		if g.n(2) == 0 {
			*a = g.value(0)
		}
	}
	p.Recoverable = g.n(2) == 0
	return p
}

func (g gen) message() Message {
	m := Message{MessageID: g.str(), SessionID: g.str(), Sequence: g.i64(), Revision: g.i64(), Role: Role(g.str()),
		State: MessageState(g.str()), TurnID: g.str(), Visibility: Visibility(g.str()), CreatedAt: g.i64()}
	if g.n(6) != 0 {
		m.Parts = make([]Part, g.n(4))
		for i := range m.Parts {
			m.Parts[i] = g.part()
		}
	}
	return m
}

func (g gen) messages() []Message {
	if g.n(6) == 0 {
		return nil
	}
	ms := make([]Message, g.n(4))
	for i := range ms {
		ms[i] = g.message()
	}
	return ms
}

func (g gen) page() MessagePage {
	return MessagePage{Items: g.messages(), Total: g.i64(), StartSequence: g.i64(), EndSequence: g.i64(),
		NextBeforeSequence: g.i64(), HasMore: g.n(2) == 0}
}

func (g gen) of(s string) any {
	switch s {
	case "event":
		ev := &Event{Type: g.str(), SessionID: g.str(), PageLimit: int(g.i64()), IncludeInternal: g.n(2) == 0,
			RequestID: g.u64(), Error: g.str(), Jitter: g.i64(), TimerID: g.u64()}
		if g.n(2) == 0 {
			ev.Data = []byte(g.str())
		}
		if g.n(3) == 0 {
			p := g.page()
			ev.Page = &p
		}
		return ev
	case "frame":
		f := &Frame{Seq: g.u64(), Kind: g.str(), Protocol: int(g.i64()), SessionID: g.str(), HeadSequence: g.i64(),
			MessageID: g.str(), Revision: g.i64(), PartID: g.str(), Offset: g.i64(), Text: g.str(), Code: g.str(), Reason: g.str()}
		if g.n(3) == 0 {
			m := g.message()
			f.Message = &m
		}
		if g.n(3) == 0 {
			p := g.part()
			f.Part = &p
		}
		return f
	case "page":
		p := g.page()
		return &p
	case "message":
		m := g.message()
		return &m
	case "output":
		o := &Output{}
		if g.n(5) != 0 {
			o.Commands = make([]Command, g.n(4))
		}
		for i := range o.Commands {
			c := Command{Type: g.str(), SessionID: g.str(), RequestID: g.u64(), Limit: int(g.i64()), BeforeSequence: g.i64(),
				IncludeInternal: g.n(2) == 0, TimerID: g.u64(), DelayMs: g.i64(), Reset: g.n(2) == 0, Status: g.str(), Reason: g.str()}
			if g.n(2) == 0 {
				c.MessageIDs = []string{g.str(), g.str()}
			}
			o.Commands[i] = c
		}
		if g.n(2) == 0 {
			o.Error = &Error{Code: g.str(), Message: g.str()}
		}
		return o
	case "changes":
		ch := &Changes{Status: g.str(), Total: g.i64(), HasMoreOlder: g.n(2) == 0, NextBeforeSequence: g.i64(),
			LoadingOlder: g.n(2) == 0, IncludeInternal: g.n(2) == 0, Reset: g.n(2) == 0, Messages: []MessageChange{}}
		for range g.n(4) {
			mc := MessageChange{MessageID: g.str()}
			switch g.n(3) {
			case 0:
				m := g.message()
				mc.Message = &m
			case 1:
				for range g.n(3) {
					mc.Parts = append(mc.Parts, PartChange{Index: int(g.u64() % 1000), Part: g.part()})
				}
				for range g.n(3) {
					mc.Appends = append(mc.Appends, TextAppend{Index: int(g.u64() % 1000), Text: g.str()})
				}
			}
			ch.Messages = append(ch.Messages, mc)
		}
		return ch
	}
	return &View{SessionID: g.str(), Status: g.str(), Messages: g.messages(), Total: g.i64(), HasMoreOlder: g.n(2) == 0,
		NextBeforeSequence: g.i64(), LoadingOlder: g.n(2) == 0, IncludeInternal: g.n(2) == 0, Digest: g.str()}
}

// TestCodecMatchesLibrary: random values, both directions.
func TestCodecMatchesLibrary(t *testing.T) {
	g := gen{rand.New(rand.NewSource(1))}
	for i := range 300 {
		for _, s := range shapes {
			v := g.of(s.name)
			lib := libEncode(t, v)
			if s.encode != nil {
				hand, err := s.encode(v)
				if err != nil {
					t.Fatalf("%d %s: hand encoder: %v", i, s.name, err)
				}
				if !bytes.Equal(hand, lib) {
					t.Fatalf("%d %s: hand encoding differs from msgpack/v5's\nvalue %#v\nhand %x\nlib  %x", i, s.name, v, hand, lib)
				}
			}
			checkDecode(t, s, lib, true)
			// The same value written oddly: keys shuffled, unknown keys, wide
			// ints, bin for str, nils for zero fields, the array form.
			checkDecode(t, s, oddEncode(t, g, reflect.ValueOf(v)), true)
		}
	}
}

// checkDecode decodes b with both decoders and compares.
func checkDecode(t *testing.T, s shape, b []byte, mustAccept bool) {
	t.Helper()
	want := s.newPtr()
	libErr := msgpack.Unmarshal(b, want)
	got, err := s.decode(b)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeMalformed {
			t.Fatalf("%s: untyped error %v", s.name, err)
		}
	}
	switch {
	case libErr != nil && err != nil:
		return
	case libErr != nil:
		if mustAccept {
			t.Fatalf("%s: msgpack/v5 refuses %x: %v", s.name, b, libErr)
		}
		if !msgp.NestingOK(b) {
			return
		}
		t.Fatalf("%s: hand decoder accepts what msgpack/v5 refuses (%v): %x", s.name, libErr, b)
	case err != nil:
		if r := (msgp.Reader{Buf: b}); !msgp.NestingOK(b) || depthOver(b) || r.Skip() && !r.Done() {
			return // the depth limit is ours
		}
		t.Fatalf("%s: hand decoder refuses what msgpack/v5 accepts: %v\n%x", s.name, err, b)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decoded values differ\nhand %#v\nlib  %#v\nbytes %x", s.name, got, want, b)
	}
}

// depthOver reports inputs whose `any` values nest past the limit (the
// limit and trailing bytes are this decoder's own refusals).
func depthOver(b []byte) bool {
	var v any
	d := msgp.Decoder{R: msgp.Reader{Buf: b}}
	v = d.AnyValue(-msgp.MaxNesting) // the struct levels above the value
	_ = v
	return d.Failed()
}

// oddEncode writes v as msgpack/v5 would accept it but never writes it.
func oddEncode(t *testing.T, g gen, rv reflect.Value) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	var walk func(rv reflect.Value, depth int)
	walk = func(rv reflect.Value, depth int) {
		var err error
		switch rv.Kind() {
		case reflect.Pointer:
			if rv.IsNil() {
				err = enc.EncodeNil()
				break
			}
			walk(rv.Elem(), depth)
			return
		case reflect.Struct:
			typ := rv.Type()
			if typ.PkgPath() != reflect.TypeFor[Event]().PkgPath() || typ == reflect.TypeFor[tagged]() {
				err = enc.Encode(rv.Interface())
				break
			}
			if g.n(6) == 0 { // the array form: every field in order
				err = enc.EncodeArrayLen(typ.NumField())
				for i := range typ.NumField() {
					walk(rv.Field(i), depth+1)
				}
				break
			}
			type kv struct {
				k string
				v reflect.Value
			}
			var kvs []kv
			for i := range typ.NumField() {
				name, _, _ := cutTag(typ.Field(i).Tag.Get("msgpack"))
				if rv.Field(i).IsZero() && g.n(2) == 0 {
					if g.n(2) == 0 {
						kvs = append(kvs, kv{name, reflect.Value{}}) // nil for the zero value
					}
					continue
				}
				kvs = append(kvs, kv{name, rv.Field(i)})
			}
			if g.n(3) == 0 {
				kvs = append(kvs, kv{"future_" + g.str(), reflect.ValueOf(map[string]any{"x": []any{1, nil}})})
			}
			g.r.Shuffle(len(kvs), func(i, j int) { kvs[i], kvs[j] = kvs[j], kvs[i] })
			err = enc.EncodeMapLen(len(kvs))
			for _, e := range kvs {
				if g.n(4) == 0 {
					_ = enc.EncodeBytes([]byte(e.k)) // a bin key
				} else {
					_ = enc.EncodeString(e.k)
				}
				if !e.v.IsValid() {
					_ = enc.EncodeNil()
				} else {
					walk(e.v, depth+1)
				}
			}
		case reflect.Slice:
			if rv.IsNil() {
				err = enc.EncodeNil()
				break
			}
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				if g.n(2) == 0 {
					err = enc.EncodeString(string(rv.Bytes()))
				} else {
					err = enc.EncodeBytes(rv.Bytes())
				}
				break
			}
			err = enc.EncodeArrayLen(rv.Len())
			for i := range rv.Len() {
				walk(rv.Index(i), depth+1)
			}
		case reflect.String:
			if g.n(3) == 0 {
				err = enc.EncodeBytes([]byte(rv.String()))
			} else {
				err = enc.EncodeString(rv.String())
			}
		case reflect.Int, reflect.Int64:
			switch g.n(3) {
			case 0:
				err = enc.EncodeInt64(rv.Int())
			case 1:
				if n := rv.Int(); n >= 0 {
					err = enc.EncodeUint64(uint64(n))
				} else {
					err = enc.EncodeInt(n)
				}
			default:
				err = enc.EncodeInt(rv.Int())
			}
		case reflect.Uint64:
			if g.n(2) == 0 {
				err = enc.EncodeUint64(rv.Uint())
			} else {
				err = enc.EncodeUint(rv.Uint())
			}
		default:
			err = enc.Encode(rv.Interface())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(rv, 0)
	return buf.Bytes()
}

func cutTag(tag string) (string, string, bool) {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

// TestCodecMutations: damaged encodings never panic the hand decoder, fail
// only with a typed malformed error, and whatever both decoders accept
// decodes the same.
func TestCodecMutations(t *testing.T) {
	g := gen{rand.New(rand.NewSource(2))}
	for range 250 {
		for _, s := range shapes {
			b := libEncode(t, g.of(s.name))
			if len(b) > 4096 {
				continue
			}
			b = mutate(g, b)
			checkDecode(t, s, b, false)
		}
	}
}

func mutate(g gen, b []byte) []byte {
	b = bytes.Clone(b)
	switch g.n(4) {
	case 0:
		return b[:g.n(len(b))]
	case 1:
		b[g.n(len(b))] = byte(g.n(256))
	case 2:
		i := g.n(len(b))
		return append(b[:i:i], b[min(len(b), i+1+g.n(3)):]...)
	default:
		b[g.n(len(b))] ^= 1 << uint(g.n(8))
		b[g.n(len(b))] = []byte{0xc0, 0x90, 0x80, 0xa0, 0xdc, 0xc1, 0xd4}[g.n(7)]
	}
	return b
}

// FuzzCodecMatchesLibrary: on any input, each hand decoder fails with a
// typed error or agrees with msgpack/v5; what it decodes re-encodes to
// what msgpack/v5 writes for the same value.
func FuzzCodecMatchesLibrary(f *testing.F) {
	g := gen{rand.New(rand.NewSource(3))}
	for _, s := range shapes {
		f.Add(libEncode(f, g.of(s.name)))
	}
	f.Add(encodePage(MessagePage{Items: []Message{agentMsg("m", 1, 1, MessageDone, textPart("p", 1, StateDone, "x"))}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range shapes {
			checkDecode(t, s, b, false)
			if v, err := s.decode(b); err == nil && s.encode != nil {
				hand, err := s.encode(v)
				if err != nil {
					t.Fatalf("%s: re-encode: %v", s.name, err)
				}
				if lib := libEncode(t, v); !bytes.Equal(hand, lib) {
					t.Fatalf("%s: re-encoding differs\nhand %x\nlib  %x", s.name, hand, lib)
				}
			}
		}
	})
}

func TestEventDataAliasesInput(t *testing.T) {
	in := encodeEvent(Event{Type: EvFrames, Data: []byte{0x91, 0x80}})
	var ev Event
	if err := decodeEventInPlace(in, &ev); err != nil || ev.Type != EvFrames || &ev.Data[0] != &in[len(in)-2] {
		t.Fatalf("frames data not read in place: %+v %v", ev, err)
	}
	owned, err := decodeEvent(in)
	if err != nil || &owned.Data[0] == &in[len(in)-2] {
		t.Fatal("decodeEvent must copy data")
	}
}
