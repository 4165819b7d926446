package synccore

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// property_test.go: random session histories played by a simulated server
// against the client, with random disconnects, duplicated and re-ordered
// delivery, failed and late pages. At every step each text the client shows
// must be a prefix of the longest text that part ever had on the server,
// and the window must be contiguous; after the last reconnect the view must
// equal the server's final snapshot, digest for digest.

type simServer struct {
	rng     *rand.Rand
	msgs    []Message // committed, by sequence
	proj    []Part    // projection parts of the streaming message beyond its committed ones
	stream  int       // index in msgs of the streaming agent message, -1 if none
	nextID  int
	maxText map[string]string // message/part -> longest text it ever had
	subs    []*simSub
}

type simSub struct {
	queue   []Frame
	nextSeq uint64
	sent    []Frame // delivered frames, for duplicates
}

func newSimServer(rng *rand.Rand) *simServer {
	return &simServer{rng: rng, stream: -1, maxText: map[string]string{}}
}

func (s *simServer) id(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s%d", prefix, s.nextID)
}

func (s *simServer) broadcast(f Frame) {
	for _, sub := range s.subs {
		f.Seq = sub.nextSeq
		sub.nextSeq++
		sub.queue = append(sub.queue, f)
	}
}

func (s *simServer) commit(i int) {
	m := s.msgs[i]
	m.Parts = append([]Part(nil), m.Parts...)
	s.msgs[i] = m
	for _, p := range m.Parts {
		s.noteText(m.MessageID, p)
	}
	cp := m
	s.broadcast(Frame{Kind: FrameMessage, Message: &cp})
}

func (s *simServer) noteText(msg string, p Part) {
	k := msg + "/" + p.PartID
	old := s.maxText[k]
	if len(p.Text) > len(old) {
		if !strings.HasPrefix(p.Text, old) {
			panic("simulator: text of " + k + " is not monotonic")
		}
		s.maxText[k] = p.Text
	}
}

func (s *simServer) addMessage(m Message) int {
	m.SessionID, m.Sequence, m.Revision, m.Visibility = "s1", int64(len(s.msgs)+1), 1, VisibilityVisible
	m.CreatedAt = 1000 + m.Sequence
	s.msgs = append(s.msgs, m)
	s.commit(len(s.msgs) - 1)
	return len(s.msgs) - 1
}

// step plays one random server operation.
func (s *simServer) step() {
	r := s.rng.Intn(100)
	switch {
	case s.stream < 0 && r < 25:
		s.addMessage(userMsg(s.id("u"), 0, "question"))
	case s.stream < 0 && r < 45:
		s.stream = s.addMessage(Message{MessageID: s.id("a"), Role: RoleAgent, State: MessageStreaming, TurnID: "t", Parts: []Part{}})
	case s.stream < 0 && r < 50:
		// an action while idle: a separate agent message holding the action
		s.addMessage(Message{MessageID: s.id("a"), Role: RoleAgent, State: MessageDone, TurnID: "t",
			Parts: []Part{{PartID: s.id("act"), Sequence: 1, Type: PartAction, State: ActionCompleted, ActionID: "x", ActionType: "set_model"}}})
	case s.stream < 0:
		return
	case r < 15 || len(s.proj) == 0:
		m := &s.msgs[s.stream]
		typ := PartText
		if s.rng.Intn(3) == 0 {
			typ = PartReasoning
		}
		p := Part{PartID: s.id("p"), Sequence: int64(len(m.Parts) + len(s.proj) + 1), Type: typ, State: StateStreaming, StepID: "st"}
		if s.rng.Intn(2) == 0 {
			p.Text = "Start "
		}
		s.proj = append(s.proj, p)
		s.noteText(m.MessageID, p)
		cp := p
		s.broadcast(Frame{Kind: FramePart, MessageID: m.MessageID, Revision: m.Revision, Part: &cp})
	case r < 70:
		m := &s.msgs[s.stream]
		p := &s.proj[len(s.proj)-1]
		words := []string{"lorem ", "ipsum ", "dolor ", "é ", "✓", "x"}
		t := words[s.rng.Intn(len(words))]
		off := int64(len(p.Text))
		p.Text += t
		s.noteText(m.MessageID, *p)
		s.broadcast(Frame{Kind: FrameDelta, MessageID: m.MessageID, Revision: m.Revision, PartID: p.PartID, Offset: off, Text: t})
	case r < 85:
		s.commitStep(false, false)
	case r < 92:
		s.commitStep(true, false) // an action mid-run joins the streaming message
	case r < 97:
		s.commitStep(false, true)
	default:
		s.crash()
	}
}

// commitStep commits the projection (text parts done), optionally with an
// action part, optionally closing the message.
func (s *simServer) commitStep(action, closeIt bool) {
	m := &s.msgs[s.stream]
	for _, p := range s.proj {
		p.State = StateDone
		m.Parts = append(m.Parts, p)
	}
	s.proj = nil
	if action {
		m.Parts = append(m.Parts, Part{PartID: s.id("act"), Sequence: int64(len(m.Parts) + 1), Type: PartAction,
			State: ActionCompleted, ActionID: "y", ActionType: "set_approval_mode"})
	}
	m.Revision++
	if closeIt {
		m.State = MessageDone
	}
	s.commit(s.stream)
	if closeIt {
		s.stream = -1
	}
}

// crash loses the projection and every subscription; on restart the
// streaming message is closed with an error part.
func (s *simServer) crash() {
	s.subs = nil
	s.proj = nil
	m := &s.msgs[s.stream]
	m.Parts = append(m.Parts, Part{PartID: s.id("err"), Sequence: int64(len(m.Parts) + 1), Type: PartError,
		Scope: ErrorScopeTurn, Code: "process_restarted", Message: "restarted", Recoverable: true})
	m.Revision++
	m.State = MessageDone
	s.commit(s.stream)
	s.stream = -1
}

func (s *simServer) subscribe() *simSub {
	sub := &simSub{nextSeq: 1}
	s.subs = append(s.subs, sub)
	s.broadcastTo(sub, Frame{Kind: FrameHello, Protocol: 1, SessionID: "s1", HeadSequence: int64(len(s.msgs))})
	if s.stream >= 0 {
		m := s.msgs[s.stream]
		for _, p := range s.proj {
			cp := p
			s.broadcastTo(sub, Frame{Kind: FramePart, MessageID: m.MessageID, Revision: m.Revision, Part: &cp})
		}
	}
	return sub
}

func (s *simServer) broadcastTo(sub *simSub, f Frame) {
	f.Seq = sub.nextSeq
	sub.nextSeq++
	sub.queue = append(sub.queue, f)
}

func (s *simServer) unsubscribe(sub *simSub) {
	for i, x := range s.subs {
		if x == sub {
			s.subs = append(s.subs[:i], s.subs[i+1:]...)
			return
		}
	}
}

func (s *simServer) page(limit int, before int64) MessagePage {
	end := len(s.msgs)
	if before > 0 {
		end = min(end, int(before-1))
	}
	start := max(0, end-limit)
	items := append([]Message{}, s.msgs[start:end]...)
	p := MessagePage{Items: items, Total: int64(len(s.msgs)), HasMore: start > 0}
	if len(items) > 0 {
		p.StartSequence, p.EndSequence = items[0].Sequence, items[len(items)-1].Sequence
		if p.HasMore {
			p.NextBeforeSequence = p.StartSequence
		}
	}
	return p
}

// simHost is the driver: it carries out the client's commands with chaos.
type simHost struct {
	t      *testing.T
	rng    *rand.Rand
	srv    *simServer
	c      *Client
	sub    *simSub
	pages  []Command
	timers []uint64
	steps  int
	stats  map[string]int
	ghost  *simSub // the last subscription dropped: late frames from it may still arrive
	mirror Mirror  // the host's copy of the view, patched with TakeChanges
	// lastTake is the last take applied (its scalars stand for a compact
	// answer's), compactID the message a compact answer appends to.
	lastTake  Changes
	compactID string
}

// syncMirror takes the client's changes (as the Go value or through the
// bytes of the WebAssembly ABI) into the mirror, which must then equal the
// view: the incremental render loses and doubles nothing.
func (h *simHost) syncMirror() {
	var ch Changes
	if h.rng.Intn(2) == 0 {
		ch = h.c.TakeChanges()
	} else {
		var err error
		b := h.c.appendChangesBytes(nil)
		if ch, err = decodeChanges(b); err != nil {
			h.t.Fatalf("step %d: decode changes: %v", h.steps, err)
		}
		if !bytes.Equal(encodeChanges(ch), b) {
			h.t.Fatalf("step %d: appendChangesBytes differs from encodeChanges", h.steps)
		}
	}
	h.applyChanges(ch)
}

// applyChanges patches the mirror with ch, which must then equal the view.
func (h *simHost) applyChanges(ch Changes) {
	for _, mc := range ch.Messages {
		h.stats["changes: whole"] += btoi(mc.Message != nil)
		h.stats["changes: parts"] += len(mc.Parts)
		h.stats["changes: appends"] += len(mc.Appends)
		h.stats["changes: kept texts"] += len(mc.KeptTexts)
		for _, pc := range mc.Parts {
			h.stats["changes: kept part texts"] += btoi(pc.KeptText)
		}
	}
	h.lastTake, h.compactID = ch, ""
	h.lastTake.Reset = false
	prev := h.mirror.Messages()
	prevDigest := digestMessages(prev.Values())
	got, err := h.mirror.Apply(ch)
	if err != nil {
		h.t.Fatalf("step %d: apply changes: %v", h.steps, err)
	}
	h.checkShared(prev, prevDigest, got, ch)
	v := h.c.View()
	if digestMessages(got.Values()) != v.Digest || got.Len() != len(v.Messages) {
		h.t.Fatalf("step %d: mirror holds %d messages, view %d: digests differ", h.steps, got.Len(), len(v.Messages))
	}
	if ch.Status != v.Status || ch.Total != v.Total || ch.HasMoreOlder != v.HasMoreOlder ||
		ch.NextBeforeSequence != v.NextBeforeSequence || ch.LoadingOlder != v.LoadingOlder {
		h.t.Fatalf("step %d: changes say %+v, view %+v", h.steps, ch, v)
	}
}

// checkShared asserts what a UI relies on: the list handed out before the
// patch is unchanged, and every message the changes did not name is the
// same *Message in the new list.
func (h *simHost) checkShared(prev MessageList, prevDigest string, got MessageList, ch Changes) {
	if digestMessages(prev.Values()) != prevDigest {
		h.t.Fatalf("step %d: a patch changed the list handed out before it", h.steps)
	}
	if ch.Reset {
		return
	}
	changed := map[string]bool{}
	for _, mc := range ch.Messages {
		changed[mc.MessageID] = true
	}
	before := map[string]*Message{}
	for _, m := range prev.All() {
		before[m.MessageID] = m
	}
	for _, m := range got.All() {
		if old, ok := before[m.MessageID]; ok && !changed[m.MessageID] && old != m {
			h.t.Fatalf("step %d: unchanged message %s is a new *Message", h.steps, m.MessageID)
		}
	}
}

func (h *simHost) handle(ev Event) {
	h.steps++
	var cmds []Command
	var err error
	switch h.rng.Intn(4) {
	case 0:
		cmds, err = h.c.Handle(ev)
	case 1:
		cmds, err = h.handleChanges(ev) // changes_handle_test.go
	case 2:
		cmds, err = h.handleCompact(ev) // changes_handle_test.go
	default:
		o, derr := decodeOutput(h.c.handleBytes(encodeEvent(ev)))
		if derr != nil {
			h.t.Fatalf("output: %v", derr)
		}
		cmds = o.Commands
		if o.Error != nil {
			err = o.Error
		}
	}
	if err != nil {
		h.t.Fatalf("step %d: %s: %v", h.steps, ev.Type, err)
	}
	for _, cmd := range cmds {
		h.stats[cmd.Type+" "+cmd.Status+" "+strings.SplitN(cmd.Reason, ":", 2)[0]]++
		switch cmd.Type {
		case CmdOpenSubscription:
			h.sub = h.srv.subscribe()
		case CmdCloseSubscription:
			h.dropSub()
		case CmdFetchPage:
			if cmd.Limit != 3 {
				h.t.Fatalf("limit %d", cmd.Limit)
			}
			h.pages = append(h.pages, cmd)
		case CmdSetTimer:
			h.timers = append(h.timers, cmd.TimerID)
		}
	}
	h.check()
	if h.rng.Intn(3) == 0 { // hosts take changes once per several events
		h.syncMirror()
	}
}

func (h *simHost) dropSub() {
	if h.sub != nil {
		h.srv.unsubscribe(h.sub)
		h.ghost, h.sub = h.sub, nil
	}
}

// check asserts the invariants that hold at every step.
func (h *simHost) check() {
	win := h.c.win
	for i, e := range win {
		if i > 0 && e.meta.Sequence != win[i-1].meta.Sequence+1 {
			h.t.Fatalf("step %d: window not contiguous at %d", h.steps, e.meta.Sequence)
		}
		for j := range e.parts {
			p := &e.parts[j]
			if p.Type != PartText && p.Type != PartReasoning {
				continue
			}
			full := h.srv.maxText[e.meta.MessageID+"/"+p.PartID]
			if txt := e.text(j); !strings.HasPrefix(full, txt) {
				h.t.Fatalf("step %d: %s/%s shows %q, not a prefix of %q", h.steps, e.meta.MessageID, p.PartID, txt, full)
			}
		}
	}
}

// deliver sends up to n queued frames as one WebSocket message.
func (h *simHost) deliver(n int, chaos bool) {
	q := h.sub.queue
	n = min(n, len(q))
	batch := append([]Frame(nil), q[:n]...)
	h.sub.queue = q[n:]
	if chaos {
		switch h.rng.Intn(2) {
		case 0:
			if len(h.sub.sent) > 0 { // a duplicate of an earlier frame
				batch = append([]Frame{h.sub.sent[len(h.sub.sent)-1]}, batch...)
			}
		case 1:
			if len(batch) > 1 { // two frames swapped
				batch[0], batch[1] = batch[1], batch[0]
			}
		}
	}
	h.sub.sent = append(h.sub.sent, batch...)
	h.handle(Event{Type: EvFrames, Data: encodeFrames(batch)})
}

func (h *simHost) servePage(fail bool) {
	i := h.rng.Intn(len(h.pages))
	cmd := h.pages[i]
	h.pages = append(h.pages[:i], h.pages[i+1:]...)
	if fail {
		h.handle(Event{Type: EvPageFailed, RequestID: cmd.RequestID, Error: "503", Jitter: int64(h.rng.Intn(1001))})
		return
	}
	p := h.srv.page(cmd.Limit, cmd.BeforeSequence)
	h.handle(Event{Type: EvPage, RequestID: cmd.RequestID, Data: encodePage(p)})
}

func (h *simHost) fireTimer() {
	id := h.timers[0]
	h.timers = h.timers[1:]
	h.handle(Event{Type: EvTimerFired, TimerID: id})
}

// chaosStep does one random thing.
func (h *simHost) chaosStep() {
	switch r := h.rng.Intn(100); {
	case r < 40:
		h.srv.step()
		if h.sub != nil && !h.srv.hasSub(h.sub) { // the server crashed
			h.sub = nil
			h.handle(Event{Type: EvConnectionLost, Error: "crash", Jitter: int64(h.rng.Intn(1001))})
		}
	case r < 70:
		if h.sub != nil && len(h.sub.queue) > 0 {
			h.deliver(1+h.rng.Intn(4), h.rng.Intn(40) == 0)
		}
	case r < 82:
		if len(h.pages) > 0 {
			h.servePage(h.rng.Intn(15) == 0)
		}
	case r < 90:
		if len(h.timers) > 0 {
			h.fireTimer()
		}
	case r < 91:
		if h.sub != nil {
			h.dropSub()
			h.handle(Event{Type: EvConnectionLost, Jitter: int64(h.rng.Intn(1001))})
		}
	case r < 94:
		h.handle(Event{Type: EvLoadOlder})
	case r < 95:
		// a late frame of a closed subscription, delivered after it ended
		if g := h.ghost; g != nil && len(g.sent)+len(g.queue) > 0 {
			all := append(append([]Frame(nil), g.sent...), g.queue...)
			f := all[h.rng.Intn(len(all))]
			h.handle(Event{Type: EvFrames, Data: encodeFrames([]Frame{f})})
		}
	}
}

func (s *simServer) hasSub(sub *simSub) bool {
	for _, x := range s.subs {
		if x == sub {
			return true
		}
	}
	return false
}

// settle runs without chaos until nothing is left to do.
func (h *simHost) settle() {
	for range 100000 {
		switch {
		case h.sub != nil && len(h.sub.queue) > 0:
			h.deliver(3, false)
		case len(h.pages) > 0:
			h.servePage(false)
		case len(h.timers) > 0:
			h.fireTimer()
		default:
			return
		}
	}
	h.t.Fatal("settle did not finish")
}

func TestPropertyRandomHistories(t *testing.T) {
	histories := 300
	if testing.Short() {
		histories = 50
	}
	stats := map[string]int{}
	msgs := 0
	defer func() { t.Logf("%d histories, %d messages; commands: %v", histories, msgs, stats) }()
	for seed := range histories {
		rng := rand.New(rand.NewSource(int64(seed)))
		h := &simHost{t: t, rng: rng, srv: newSimServer(rng), c: NewClient(Options{}), stats: stats}
		h.handle(Event{Type: EvStart, SessionID: "s1", PageLimit: 3})
		ops := 20 + rng.Intn(150)
		for range ops {
			h.chaosStep()
		}
		if h.srv.stream >= 0 {
			h.srv.commitStep(false, true)
		}
		h.settle()
		// The last reconnect: the view must become the server's snapshot.
		if h.sub != nil {
			h.dropSub()
			h.handle(Event{Type: EvConnectionLost})
		}
		h.settle()
		for h.c.hasMoreOlder {
			h.handle(Event{Type: EvLoadOlder})
			h.settle()
		}
		if h.c.status != StatusLive {
			t.Fatalf("seed %d: ended %s", seed, h.c.status)
		}
		msgs += len(h.srv.msgs)
		h.syncMirror()
		for _, k := range []string{"changes: whole", "changes: parts", "changes: appends", "changes: compact", "changes: kept texts", "changes: kept part texts"} {
			if seed == histories-1 && stats[k] == 0 {
				t.Fatalf("no history exercised %s", k)
			}
		}
		if got, want := h.c.Digest(), digestMessages(h.srv.msgs); got != want {
			t.Fatalf("seed %d: client holds %d messages, server %d: digests differ", seed, len(h.c.win), len(h.srv.msgs))
		}
	}
}
