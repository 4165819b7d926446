package main

import (
	"strconv"
	"strings"

	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/testdata"
)

// dsl.go: small constructors that keep the trace sources readable.

type trace struct {
	name, desc string
	steps      []step
}

type step struct {
	note     string
	ev       synccore.Event
	frames   []synccore.Frame
	page     *synccore.MessagePage
	rawData  []byte // frames event with these bytes as data
	rawEvent []byte // the whole event bytes
	cmds     []synccore.Command
	err      string
	view     *testdata.ViewSummary
}

// anyReason in an expected command takes the client's reason text; used
// only where the reason is an error message (the code is still checked).
const anyReason = "\x00any"

const sid = "s1"

func tr(name, desc string, steps ...[]step) trace {
	t := trace{name: name, desc: desc}
	for _, s := range steps {
		t.steps = append(t.steps, s...)
	}
	return t
}

func one(s step) []step { return []step{s} }

// with attaches an expected view to the last step.
func with(ss []step, v testdata.ViewSummary) []step {
	ss = append([]step(nil), ss...)
	ss[len(ss)-1].view = &v
	return ss
}

// --- events ---

func evStart(note string, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvStart, SessionID: sid}, cmds: cmds}
}

func evFrames(note string, frames []synccore.Frame, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvFrames}, frames: frames, cmds: cmds}
}

func evPage(note string, req uint64, p synccore.MessagePage, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvPage, RequestID: req}, page: &p, cmds: cmds}
}

func evPageFailed(note string, req uint64, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvPageFailed, RequestID: req, Error: "HTTP 503"}, cmds: cmds}
}

func evLost(note string, jitter int64, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvConnectionLost, Jitter: jitter, Error: "EOF"}, cmds: cmds}
}

func evTimer(note string, id uint64, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvTimerFired, TimerID: id}, cmds: cmds}
}

func evOlder(note string, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvLoadOlder}, cmds: cmds}
}

func evInternal(note string, on bool, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvSetIncludeInternal, IncludeInternal: on}, cmds: cmds}
}

func evClose(note string, cmds ...synccore.Command) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvClose}, cmds: cmds}
}

func evOpened(note string) step {
	return step{note: note, ev: synccore.Event{Type: synccore.EvSubscriptionOpened}}
}

func fails(s step, code string) step { s.err = code; return s }

// --- commands ---

func cStatus(s string) synccore.Command {
	return synccore.Command{Type: synccore.CmdStatus, Status: s}
}
func cStatusR(s, reason string) synccore.Command {
	return synccore.Command{Type: synccore.CmdStatus, Status: s, Reason: reason}
}
func cOpen() synccore.Command {
	return synccore.Command{Type: synccore.CmdOpenSubscription, SessionID: sid}
}
func cCloseSub(reason string) synccore.Command {
	return synccore.Command{Type: synccore.CmdCloseSubscription, Reason: reason}
}
func cFetch(req uint64, before int64) synccore.Command {
	return synccore.Command{Type: synccore.CmdFetchPage, SessionID: sid, RequestID: req, Limit: 50, BeforeSequence: before}
}
func cFetchI(req uint64, before int64) synccore.Command {
	c := cFetch(req, before)
	c.IncludeInternal = true
	return c
}
func cTimer(id uint64, delay int64) synccore.Command {
	return synccore.Command{Type: synccore.CmdSetTimer, TimerID: id, DelayMs: delay}
}
func cRender(ids ...string) synccore.Command {
	return synccore.Command{Type: synccore.CmdRender, MessageIDs: ids}
}
func cReset() synccore.Command { return synccore.Command{Type: synccore.CmdRender, Reset: true} }

// resyncCmds is what a broken stream answers: close, backoff, timer.
func resyncCmds(reason string, timer uint64, delay int64) []synccore.Command {
	return []synccore.Command{cCloseSub(reason), cStatusR(synccore.StatusBackoff, reason), cTimer(timer, delay)}
}

// --- frames ---

func hello(seq uint64, head int64) synccore.Frame {
	return synccore.Frame{Seq: seq, Kind: synccore.FrameHello, Protocol: 1, SessionID: sid, HeadSequence: head}
}
func fMsg(seq uint64, m synccore.Message) synccore.Frame {
	return synccore.Frame{Seq: seq, Kind: synccore.FrameMessage, Message: &m}
}
func fPart(seq uint64, msg string, rev int64, p synccore.Part) synccore.Frame {
	return synccore.Frame{Seq: seq, Kind: synccore.FramePart, MessageID: msg, Revision: rev, Part: &p}
}
func fDelta(seq uint64, msg string, rev int64, part string, offset int64, text string) synccore.Frame {
	return synccore.Frame{Seq: seq, Kind: synccore.FrameDelta, MessageID: msg, Revision: rev, PartID: part, Offset: offset, Text: text}
}
func frames(f ...synccore.Frame) []synccore.Frame { return f }

// --- model ---

func U(id string, seq int64, text string) synccore.Message {
	return synccore.Message{MessageID: id, SessionID: sid, Sequence: seq, Revision: 1, Role: synccore.RoleUser,
		TurnID: "t" + strconv.FormatInt(seq, 10), Visibility: synccore.VisibilityVisible, CreatedAt: 1_700_000_000_000 + seq,
		Parts: []synccore.Part{{PartID: id + ".1", Sequence: 1, Type: synccore.PartText, Text: text}}}
}

func internal(m synccore.Message) synccore.Message {
	m.Visibility = synccore.VisibilityInternal
	return m
}

func A(id string, seq, rev int64, state synccore.MessageState, parts ...synccore.Part) synccore.Message {
	if parts == nil {
		parts = []synccore.Part{}
	}
	return synccore.Message{MessageID: id, SessionID: sid, Sequence: seq, Revision: rev, Role: synccore.RoleAgent,
		State: state, TurnID: "t1", Visibility: synccore.VisibilityVisible, CreatedAt: 1_700_000_000_000 + seq, Parts: parts}
}

const (
	streaming = synccore.MessageStreaming
	done      = synccore.MessageDone
)

func T(id string, seq int64, state synccore.PartState, text string) synccore.Part {
	return synccore.Part{PartID: id, Sequence: seq, Type: synccore.PartText, StepID: "step1", State: state, Text: text}
}
func R(id string, seq int64, state synccore.PartState, text string) synccore.Part {
	p := T(id, seq, state, text)
	p.Type = synccore.PartReasoning
	return p
}
func Tool(id string, seq int64, state synccore.PartState, name string) synccore.Part {
	return synccore.Part{PartID: id, Sequence: seq, Type: synccore.PartTool, StepID: "step1", State: state,
		ToolCallID: "call-" + id, ToolName: name, Input: map[string]any{"path": "README.md"}}
}
func Inter(id string, seq int64, status, tool string) synccore.Part {
	return synccore.Part{PartID: id, Sequence: seq, Type: synccore.PartInteraction, StepID: "step1", Status: status,
		InteractionID: "ia-" + id, Request: map[string]any{"kind": "approval", "tool_call_id": tool}}
}
func Act(id string, seq int64, state synccore.PartState, typ string) synccore.Part {
	return synccore.Part{PartID: id, Sequence: seq, Type: synccore.PartAction, State: state, ActionID: "act-" + id,
		ActionType: typ, Title: typ}
}
func Err(id string, seq int64, code string) synccore.Part {
	return synccore.Part{PartID: id, Sequence: seq, Type: synccore.PartError, Scope: synccore.ErrorScopeTurn,
		Code: code, Message: "the step was interrupted", Recoverable: true}
}

func page(total int64, more bool, items ...synccore.Message) synccore.MessagePage {
	p := synccore.MessagePage{Items: items, Total: total, HasMore: more}
	if items == nil {
		p.Items = []synccore.Message{}
	}
	if len(items) > 0 {
		p.StartSequence, p.EndSequence = items[0].Sequence, items[len(items)-1].Sequence
		if more {
			p.NextBeforeSequence = items[0].Sequence
		}
	}
	return p
}

// --- expected views, written by hand ---

// view is a ViewSummary: status, total, has_more_older, messages.
func view(status string, total int64, more bool, msgs ...testdata.MessageSummary) testdata.ViewSummary {
	if msgs == nil {
		msgs = []testdata.MessageSummary{}
	}
	return testdata.ViewSummary{Status: status, Total: total, HasMoreOlder: more, Messages: msgs}
}

func loading(v testdata.ViewSummary) testdata.ViewSummary { v.LoadingOlder = true; return v }

// vm is a message: "id seq rev role [state]".
func vm(header string, parts ...testdata.PartSummary) testdata.MessageSummary {
	f := strings.Fields(header)
	seq, _ := strconv.ParseInt(f[1], 10, 64)
	rev, _ := strconv.ParseInt(strings.TrimPrefix(f[2], "r"), 10, 64)
	m := testdata.MessageSummary{ID: f[0], Sequence: seq, Revision: rev, Role: f[3], Parts: parts}
	if len(f) > 4 {
		m.State = f[4]
	}
	if m.Parts == nil {
		m.Parts = []testdata.PartSummary{}
	}
	return m
}

// vp is a part: "id type [state]" and its text (text, reasoning) or detail.
func vp(header, text string) testdata.PartSummary {
	f := strings.Fields(header)
	p := testdata.PartSummary{ID: f[0], Type: f[1]}
	if len(f) > 2 {
		p.State = f[2]
	}
	if p.Type == "text" || p.Type == "reasoning" {
		p.Text = text
	} else {
		p.Detail = text
	}
	return p
}

// vu is the summary of U(id, seq, text).
func vu(id string, seq int64, text string) testdata.MessageSummary {
	return vm(id+" "+strconv.FormatInt(seq, 10)+" r1 user", vp(id+".1 text", text))
}

// golive is the usual opening: start, socket open, hello, head page.
func golive(p synccore.MessagePage) []step {
	return []step{
		evStart("start", cStatus(synccore.StatusConnecting), cOpen()),
		evOpened("subscription opened"),
		evFrames("hello", frames(hello(1, p.EndSequence)), cStatus(synccore.StatusSyncing), cFetch(1, 0)),
		evPage("head page", 1, p, cStatus(synccore.StatusLive), cReset()),
	}
}

// reconnect is timer -> open -> hello -> fetch for the given timer and request.
func reconnect(timer, req uint64) []step {
	return []step{
		evTimer("backoff over", timer, cStatus(synccore.StatusConnecting), cOpen()),
		evFrames("hello again", frames(hello(1, 0)), cStatus(synccore.StatusSyncing), cFetch(req, 0)),
	}
}
