package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// fakeBackend records what the UI asks; its one session's views are fed
// by the test.
type fakeBackend struct {
	mu       sync.Mutex
	calls    []string
	sessions []bindings.Session
	onView   func(bindings.View)
	branches bindings.Branches // what Branches answers (not recorded)
}

func (f *fakeBackend) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeBackend) called() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, "; ")
}

func (f *fakeBackend) Sessions(context.Context) ([]bindings.Session, error) {
	f.record("sessions")
	return f.sessions, nil
}

func (f *fakeBackend) Create(context.Context) (bindings.Session, error) {
	f.record("create")
	s := bindings.Session{SessionID: fmt.Sprintf("ses_%d", len(f.sessions)+1), Model: "scripted"}
	f.sessions = append([]bindings.Session{s}, f.sessions...)
	return s, nil
}

func (f *fakeBackend) Rename(_ context.Context, id, title string) (bindings.Session, error) {
	f.record("rename %s %s", id, title)
	for i := range f.sessions {
		if f.sessions[i].SessionID == id {
			f.sessions[i].Title = title
			return f.sessions[i], nil
		}
	}
	return bindings.Session{}, synccore.ErrNotFound
}

func (f *fakeBackend) Delete(_ context.Context, id string) error {
	f.record("delete %s", id)
	for i := range f.sessions {
		if f.sessions[i].SessionID == id {
			f.sessions = append(f.sessions[:i], f.sessions[i+1:]...)
			return nil
		}
	}
	return synccore.ErrNotFound
}

func (f *fakeBackend) Open(_ context.Context, id string, onView func(bindings.View)) (conn, error) {
	f.record("open %s", id)
	f.onView = onView
	return fakeConn{f}, nil
}

type fakeConn struct{ f *fakeBackend }

func (c fakeConn) Send(_ context.Context, text string) error {
	c.f.record("send %s", text)
	return nil
}

func (c fakeConn) Answer(_ context.Context, id string, r bindings.InteractionResponse) error {
	switch {
	case r.Approved != nil:
		c.f.record("answer %s approved=%v", id, *r.Approved)
	case r.Answer != nil:
		c.f.record("answer %s %q", id, *r.Answer)
	}
	return nil
}

func (c fakeConn) Action(_ context.Context, a bindings.ActionType, value string) error {
	if value != "" {
		c.f.record("action %s %s", a, value)
		return nil
	}
	c.f.record("action %s", a)
	return nil
}

func (c fakeConn) LoadOlder(context.Context) error {
	c.f.record("load-older")
	return nil
}

func (c fakeConn) Regenerate(_ context.Context, seq int64) (string, error) {
	c.f.record("regenerate %d", seq)
	return "ses_regen", nil
}

func (c fakeConn) Branches(context.Context, int64) (bindings.Branches, error) {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	return c.f.branches, nil
}

func (c fakeConn) Close() error { return nil }

// harness drives a ui with messages and runs the commands it returns
// (synchronously: each command's message goes back into Update).
type harness struct {
	t    *testing.T
	m    *ui
	be   *fakeBackend
	quit bool
}

func newHarness(t *testing.T, noColor bool, width, height int) *harness {
	be := &fakeBackend{}
	m := newModel(be, newTheme(io.Discard, true, noColor), "http://test")
	h := &harness{t: t, m: m, be: be}
	h.do(m.Init())
	h.msg(tea.WindowSizeMsg{Width: width, Height: height})
	return h
}

func (h *harness) msg(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.do(cmd)
}

func (h *harness) do(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.QuitMsg:
		h.quit = true
	case tea.BatchMsg:
		for _, c := range msg {
			h.do(c)
		}
	default:
		h.msg(msg)
	}
}

func (h *harness) key(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		var km tea.KeyMsg
		switch k {
		case "enter":
			km = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			km = tea.KeyMsg{Type: tea.KeyEsc}
		case "ctrl+c":
			km = tea.KeyMsg{Type: tea.KeyCtrlC}
		case "ctrl+o":
			km = tea.KeyMsg{Type: tea.KeyCtrlO}
		case "ctrl+r":
			km = tea.KeyMsg{Type: tea.KeyCtrlR}
		case "ctrl+n":
			km = tea.KeyMsg{Type: tea.KeyCtrlN}
		case "alt+left":
			km = tea.KeyMsg{Type: tea.KeyLeft, Alt: true}
		case "alt+right":
			km = tea.KeyMsg{Type: tea.KeyRight, Alt: true}
		case "pgup":
			km = tea.KeyMsg{Type: tea.KeyPgUp}
		case "down":
			km = tea.KeyMsg{Type: tea.KeyDown}
		default:
			km = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		h.msg(km)
	}
}

// view feeds the open session a view of msgs.
func (h *harness) view(more bool, msgs ...*synccore.Message) {
	h.t.Helper()
	h.msg(viewMsg{gen: h.m.gen, v: bindings.View{Status: synccore.StatusLive, Messages: synccore.NewMessageList(msgs), HasMoreOlder: more}})
}

// screen is the View with escape sequences removed, checked to fit the
// terminal: no line wider than the width, no more lines than the height.
func (h *harness) screen() string {
	h.t.Helper()
	out := h.m.View()
	plain := ansi.Strip(out)
	ls := strings.Split(plain, "\n")
	if len(ls) > h.m.height {
		h.t.Errorf("the view has %d lines, the terminal %d", len(ls), h.m.height)
	}
	for _, l := range ls {
		if w := ansi.StringWidth(l); w > h.m.width {
			h.t.Errorf("line %q is %d cells wide, the terminal %d", l, w, h.m.width)
		}
	}
	return plain
}

func userMsg(seq int64, text string) *synccore.Message {
	return &synccore.Message{MessageID: fmt.Sprintf("m%d", seq), Sequence: seq, Role: synccore.RoleUser, Visibility: synccore.VisibilityVisible,
		Parts: []synccore.Part{{PartID: "p1", Type: synccore.PartText, Text: text}}}
}

func agentMsg(seq int64, state synccore.MessageState, parts ...synccore.Part) *synccore.Message {
	for i := range parts {
		if parts[i].PartID == "" {
			parts[i].PartID = fmt.Sprintf("p%d", i+1)
		}
	}
	return &synccore.Message{MessageID: fmt.Sprintf("m%d", seq), Sequence: seq, Role: synccore.RoleAgent, State: state, Visibility: synccore.VisibilityVisible, Parts: parts}
}

func text(s string, st synccore.PartState) synccore.Part {
	return synccore.Part{Type: synccore.PartText, Text: s, State: st}
}

// openChat creates a session from the list and opens it.
func openChat(t *testing.T, noColor bool, width, height int) *harness {
	h := newHarness(t, noColor, width, height)
	h.key("n")
	if h.m.screen != screenChat || !strings.Contains(h.be.called(), "open ses_1") {
		t.Fatalf("n did not open a new session: calls %s", h.be.called())
	}
	return h
}

// TestStreamRendersOnlyTheStreamingMessage: each delta rebuilds the
// streaming message's block alone, the finished text is rendered as
// markdown once, and later views reuse it.
func TestStreamRendersOnlyTheStreamingMessage(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 80, 30)
	var history []*synccore.Message
	for i := int64(1); i <= 20; i += 2 {
		history = append(history, userMsg(i, fmt.Sprintf("question %d", i)),
			agentMsg(i+1, synccore.MessageDone, text(fmt.Sprintf("answer **%d**", i+1), synccore.StateDone)))
	}
	h.view(false, history...)
	h.screen()
	buildsBefore, mdBefore := h.m.rd.builds, h.m.rd.mdRenders
	words := strings.Fields(strings.Repeat("streamed words arrive one by one ", 20))
	var sb strings.Builder
	user := userMsg(21, "go")
	for i, w := range words {
		sb.WriteString(w + " ")
		h.view(false, append(history, user, agentMsg(22, synccore.MessageStreaming, text(sb.String(), synccore.StateStreaming)))...)
		s := h.screen()
		if !strings.Contains(s, w) {
			t.Fatalf("delta %d: the screen lacks %q:\n%s", i, w, s)
		}
	}
	// One build for the user message, then one per delta.
	if got, want := h.m.rd.builds-buildsBefore, 1+len(words); got != want {
		t.Errorf("%d blocks built for %d deltas, want %d (only the streaming message)", got, len(words), want)
	}
	if h.m.rd.mdRenders != mdBefore {
		t.Errorf("%d markdown renders while streaming, want none", h.m.rd.mdRenders-mdBefore)
	}
	final := agentMsg(22, synccore.MessageDone, text("**bold** "+sb.String(), synccore.StateDone))
	h.view(false, append(history, user, final)...)
	h.screen()
	h.view(false, append(history, user, final, userMsg(23, "next"))...)
	s := h.screen()
	if got := h.m.rd.mdRenders - mdBefore; got != 1 {
		t.Errorf("%d markdown renders of the finished message, want 1", got)
	}
	if strings.Contains(s, "**bold**") || !strings.Contains(s, "bold streamed") {
		t.Errorf("the finished text is not rendered as markdown:\n%s", s)
	}
	if !strings.Contains(s, "› next") {
		t.Errorf("the new user message is not on screen:\n%s", s)
	}
}

// TestCJKWrapsToCellWidth: at 60 columns wide characters wrap on cell
// boundaries, streamed and finished, and nothing is lost.
func TestCJKWrapsToCellWidth(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 60, 40)
	cjk := strings.Repeat("東京都は日本の首都です。漢字とかなを混ぜた文章を折り返す。", 6)
	for _, st := range []synccore.MessageState{synccore.MessageStreaming, synccore.MessageDone} {
		ps := synccore.StateStreaming
		if st == synccore.MessageDone {
			ps = synccore.StateDone
		}
		h.view(false, userMsg(1, "日本語で"), agentMsg(2, st, text(cjk, ps)))
		s := h.screen()
		full := 0
		var got strings.Builder
		_, answer, _ := strings.Cut(s, "› 日本語で")
		answer, _, _ = strings.Cut(answer, "› Message")
		for _, l := range strings.Split(answer, "\n") {
			l = strings.TrimSpace(l)
			got.WriteString(l)
			if ansi.StringWidth(l) >= 50 {
				full++
			}
		}
		if got.String() != cjk {
			t.Errorf("%s: the screen's CJK text differs:\n got %q\nwant %q", st, got.String(), cjk)
		}
		if full < 3 {
			t.Errorf("%s: only %d lines filled to the width, the wrap wastes cells:\n%s", st, full, s)
		}
	}
}

// TestToolsFoldAndExpand: a tool is one line with its state; Ctrl-O shows
// its input and output.
func TestToolsFoldAndExpand(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 80, 20)
	tool := synccore.Part{Type: synccore.PartTool, ToolName: "get_weather", State: synccore.ToolOutputAvailable,
		Input: map[string]any{"city": "Paris"}, Output: map[string]any{"temperature_c": 28}}
	h.view(false, userMsg(1, "weather?"), agentMsg(2, synccore.MessageDone, tool, text("It is 28 °C.", synccore.StateDone)))
	s := h.screen()
	if !strings.Contains(s, `✓ get_weather · output-available {"city":"Paris"}`) || strings.Contains(s, "temperature_c") {
		t.Errorf("the tool is not folded to one line:\n%s", s)
	}
	h.key("ctrl+o")
	s = h.screen()
	if !strings.Contains(s, `output: {"temperature_c":28}`) {
		t.Errorf("Ctrl-O does not show the tool's output:\n%s", s)
	}
}

// TestKeysAnswerStopSteerQuit: y answers a pending approval, Enter answers
// a question, Esc and the first Ctrl-C stop a running turn, Enter while it
// runs steers, Ctrl-R retries, a second Ctrl-C quits.
func TestKeysAnswerStopSteerQuit(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 80, 20)
	approval := synccore.Part{Type: synccore.PartInteraction, InteractionID: "int_1", Status: synccore.InteractionPending,
		Request: map[string]any{"kind": string(httpwire.KindApproval), "tool_name": "send_email", "input": map[string]any{"to": "a@b.c"}}}
	h.view(false, userMsg(1, "mail it"), agentMsg(2, synccore.MessageStreaming, approval))
	if s := h.screen(); !strings.Contains(s, "? approve send_email") || !strings.Contains(s, "y approve · n deny") {
		t.Errorf("the approval is not shown with its keys:\n%s", s)
	}
	h.key("y")
	question := synccore.Part{Type: synccore.PartInteraction, InteractionID: "int_2", Status: synccore.InteractionPending,
		Request: map[string]any{"kind": string(httpwire.KindQuestion), "question": "Which city?"}}
	h.view(false, userMsg(1, "mail it"), agentMsg(2, synccore.MessageStreaming, approval, question))
	h.key("L", "y", "o", "n", "enter")
	h.key("esc")
	h.key("s", "t", "e", "e", "r", "enter")
	h.key("ctrl+c")
	if h.quit {
		t.Fatal("the first Ctrl-C quit")
	}
	h.view(false, userMsg(1, "mail it"), agentMsg(2, synccore.MessageDone, text("cut", synccore.StateDone),
		synccore.Part{Type: synccore.PartError, Scope: synccore.ErrorScopeTurn, Code: "model_error", Message: "boom", Recoverable: true}))
	if s := h.screen(); !strings.Contains(s, "model_error: boom") || !strings.Contains(s, "Ctrl-R retries") {
		t.Errorf("the recoverable error is not shown with its key:\n%s", s)
	}
	h.key("ctrl+r")
	for _, c := range []string{"/model gpt-x", "/approvals auto", "/approvals never"} {
		h.key(strings.Split(c, "")...)
		h.key("enter")
	}
	if s := h.screen(); !strings.Contains(s, "/approvals ask or /approvals auto") {
		t.Errorf("a bad /approvals is not explained:\n%s", s)
	}
	h.key("ctrl+c")
	if h.quit {
		t.Fatal("Ctrl-C after another key quit at once")
	}
	h.key("ctrl+c")
	if !h.quit {
		t.Fatal("a second Ctrl-C did not quit")
	}
	want := "create; open ses_1; answer int_1 approved=true; answer int_2 \"Lyon\"; action stop; send steer; action stop; action retry; action set_model gpt-x; action set_approval_mode auto"
	if got := h.be.called(); !strings.HasSuffix(got, want) {
		t.Errorf("calls\n %s\nwant them to end with\n %s", got, want)
	}
}

// TestScrollLoadsOlder: scrolling up past the oldest message held reads
// the page before it, and a short history fills the screen by itself.
func TestScrollLoadsOlder(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 80, 12)
	var msgs []*synccore.Message
	for i := int64(51); i <= 70; i++ {
		msgs = append(msgs, userMsg(i, fmt.Sprintf("line %d", i)))
	}
	h.view(true, msgs...)
	if strings.Contains(h.be.called(), "load-older") {
		t.Fatalf("loaded older history with a full screen: %s", h.be.called())
	}
	if s := h.screen(); !strings.Contains(s, "line 70") || strings.Contains(s, "line 51") {
		t.Errorf("the screen does not show the newest messages:\n%s", s)
	}
	for range 8 {
		h.key("pgup")
	}
	if s := h.screen(); !strings.Contains(s, "line 51") {
		t.Errorf("scrolled to the top, the oldest held message is not shown:\n%s", s)
	}
	if !strings.Contains(h.be.called(), "load-older") {
		t.Errorf("scrolling past the top did not load older history: %s", h.be.called())
	}
	h2 := openChat(t, true, 80, 40)
	h2.view(true, userMsg(99, "only one"))
	if !strings.Contains(h2.be.called(), "load-older") {
		t.Errorf("a history shorter than the screen was not filled: %s", h2.be.called())
	}
}

// TestSessionList: create, rename and delete from the list, back with
// Ctrl-G.
func TestSessionList(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true, 60, 20)
	if s := h.screen(); !strings.Contains(s, "no sessions yet") {
		t.Errorf("empty list:\n%s", s)
	}
	h.key("n")
	h.msg(tea.KeyMsg{Type: tea.KeyCtrlG})
	h.key("n")
	h.msg(tea.KeyMsg{Type: tea.KeyCtrlG})
	s := h.screen()
	if !strings.Contains(s, "› untitled ses_2") || !strings.Contains(s, "untitled ses_1") {
		t.Errorf("the list lacks the sessions:\n%s", s)
	}
	h.key("down", "r")
	for range 20 {
		h.msg(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	h.key("S", "t", "a", "n", "d", "u", "p", "enter")
	if s := h.screen(); !strings.Contains(s, "› Standup") {
		t.Errorf("renamed session not shown:\n%s", s)
	}
	h.key("d", "y")
	if s := h.screen(); strings.Contains(s, "Standup") || !strings.Contains(s, "ses_2") {
		t.Errorf("deleted session still shown:\n%s", s)
	}
	h.key("q")
	if !h.quit {
		t.Error("q did not quit the list")
	}
	if got := h.be.called(); !strings.Contains(got, "rename ses_1 Standup") || !strings.Contains(got, "delete ses_1") {
		t.Errorf("calls: %s", got)
	}
}

// TestColourAndNoColor: NO_COLOR writes no escape sequence; colour does,
// and light and dark terminals get different colours.
func TestColourAndNoColor(t *testing.T) {
	t.Parallel()
	msgs := []*synccore.Message{userMsg(1, "hi"), agentMsg(2, synccore.MessageDone, text("# Title\n\n**bold**", synccore.StateDone))}
	plain := openChat(t, true, 80, 20)
	plain.view(false, msgs...)
	if out := plain.m.View(); strings.Contains(out, "\x1b") {
		t.Errorf("NO_COLOR view holds escape sequences: %q", out)
	}
	views := map[bool]string{}
	for _, dark := range []bool{true, false} {
		be := &fakeBackend{}
		m := newModel(be, newTheme(io.Discard, dark, false), "http://test")
		h := &harness{t: t, m: m, be: be}
		h.msg(tea.WindowSizeMsg{Width: 80, Height: 20})
		h.key("n")
		h.view(false, msgs...)
		views[dark] = m.View()
		if !strings.Contains(views[dark], "\x1b[") {
			t.Errorf("dark=%v: no colour in the view", dark)
		}
		if got := ansi.Strip(views[dark]); !strings.Contains(got, "Title") || !strings.Contains(got, "bold") {
			t.Errorf("dark=%v: text lost:\n%s", dark, got)
		}
	}
	if views[true] == views[false] {
		t.Error("light and dark views are the same")
	}
}

// TestResizeRewraps: a resize to 60 columns re-wraps every line within it.
func TestResizeRewraps(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 120, 30)
	long := strings.Repeat("wrap me again when the terminal shrinks ", 8)
	h.view(false, userMsg(1, long), agentMsg(2, synccore.MessageStreaming, text(long, synccore.StateStreaming)))
	h.screen()
	h.msg(tea.WindowSizeMsg{Width: 60, Height: 30})
	s := h.screen() // checks every line is within 60 cells
	s, _, _ = strings.Cut(s, "› Message")
	if strings.Count(s, "shrinks") != 16 {
		t.Errorf("text lost at 60 columns:\n%s", s)
	}
}

// TestStatusLineAndReasoning: the status line follows the connection, and
// reasoning streams in full, then folds to one line (Ctrl-O unfolds it).
func TestStatusLineAndReasoning(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 80, 20)
	if s := h.screen(); !strings.Contains(s, "◌ connecting") {
		t.Errorf("before a view the status is not connecting:\n%s", s)
	}
	reasoning := synccore.Part{Type: synccore.PartReasoning, Text: "weighing the options carefully", State: synccore.StateStreaming}
	msgs := []*synccore.Message{userMsg(1, "think"), agentMsg(2, synccore.MessageStreaming, reasoning)}
	h.msg(viewMsg{gen: h.m.gen, v: bindings.View{Status: synccore.StatusBackoff, Messages: synccore.NewMessageList(msgs)}})
	s := h.screen()
	if !strings.Contains(s, "○ reconnecting") || !strings.Contains(s, "│ weighing the options carefully") {
		t.Errorf("backoff or streamed reasoning not shown:\n%s", s)
	}
	if !strings.Contains(s, "› think") || !strings.Contains(s, "think · streaming") {
		t.Errorf("the session's title is not the first message:\n%s", s)
	}
	reasoning.State = synccore.StateDone
	h.view(false, userMsg(1, "think"), agentMsg(2, synccore.MessageDone, reasoning, text("decided", synccore.StateDone)))
	s = h.screen()
	if !strings.Contains(s, "● live") || !strings.Contains(s, "∴ thought · 4 words") || strings.Contains(s, "weighing") {
		t.Errorf("finished reasoning is not folded, or the status not live:\n%s", s)
	}
	h.key("ctrl+o")
	if s := h.screen(); !strings.Contains(s, "│ weighing the options carefully") {
		t.Errorf("Ctrl-O does not unfold the reasoning:\n%s", s)
	}
}

// TestSteerSplitsTheReply: the parts a reply wrote after reading a steer
// (the agentsync.read marker) are shown after the steer, the rest above
// it; the turn still counts as running and its approval is still asked.
func TestSteerSplitsTheReply(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 80, 30)
	user, steer := userMsg(1, "go"), userMsg(3, "and also Lyon")
	user.TurnID, steer.TurnID = "t1", "t1"
	marker := synccore.Part{Type: synccore.PartData, DataType: "agentsync.read", DataID: "read-3", Data: map[string]any{"user_sequence": int8(3)}}
	approval := synccore.Part{Type: synccore.PartInteraction, InteractionID: "int_9", Status: synccore.InteractionPending,
		Request: map[string]any{"kind": "approval", "tool_name": "send_email"}}
	reply := agentMsg(2, synccore.MessageStreaming, text("first about Paris", synccore.StateDone), marker, text("now Lyon too", synccore.StateStreaming), approval)
	reply.TurnID = "t1"
	h.view(false, user, reply, steer)
	s := h.screen()
	order := []string{"› go", "first about Paris", "› and also Lyon", "now Lyon too", "? approve send_email", "y approve · n deny"}
	at := 0
	for _, w := range order {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order (want %q):\n%s", w, order, s)
		}
		at += i + len(w)
	}
	if strings.Contains(s, "agentsync.read") {
		t.Errorf("the read marker is shown:\n%s", s)
	}
	h.key("y")
	if got := h.be.called(); !strings.HasSuffix(got, "answer int_9 approved=true") {
		t.Errorf("y after a steer did not answer the approval: %s", got)
	}
}

// TestRegenerateAndSwitchVersions: Ctrl-N makes a new version of the last
// reply and opens it; with versions, the status line shows ‹ i / n › and
// Alt-←/→ opens the version beside.
func TestRegenerateAndSwitchVersions(t *testing.T) {
	t.Parallel()
	h := openChat(t, true, 100, 20)
	h.be.mu.Lock()
	h.be.branches = bindings.Branches{Sequence: 2, Index: 1, Items: []httpwire.Branch{{SessionID: "ses_a", Index: 0}, {SessionID: "ses_1", Index: 1}, {SessionID: "ses_c", Index: 2}}}
	h.be.mu.Unlock()
	h.view(false, userMsg(1, "hi"), agentMsg(2, synccore.MessageStreaming, text("hel", synccore.StateStreaming)))
	h.key("ctrl+n") // a running turn: nothing to regenerate yet
	h.view(false, userMsg(1, "hi"), agentMsg(2, synccore.MessageDone, text("hello", synccore.StateDone)))
	if s := h.screen(); !strings.Contains(s, "‹ 2 / 3 › Alt-←/→") {
		t.Errorf("the versions are not on the status line:\n%s", s)
	}
	h.key("alt+left")
	h.view(false, userMsg(1, "hi"), agentMsg(2, synccore.MessageDone, text("hey", synccore.StateDone)))
	h.key("ctrl+n")
	want := "create; open ses_1; open ses_a; regenerate 2; open ses_regen"
	if got := h.be.called(); !strings.HasSuffix(got, want) {
		t.Errorf("calls\n %s\nwant\n %s", got, want)
	}
}
