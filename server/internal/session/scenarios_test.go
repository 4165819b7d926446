package session

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentsync/agentsync/synccore"
)

// Every scenario of the scripted model, end to end: a real client fed by a
// real subscription ends with the digest of the committed snapshot.
func TestScenariosEndToEnd(t *testing.T) {
	tests := []struct {
		text  string
		check func(t *testing.T, a synccore.Message)
	}{
		{"hello there", func(t *testing.T, a synccore.Message) {
			if !strings.HasPrefix(textOf(a, synccore.PartText), "You said: “hello there”") {
				t.Fatalf("echo: %q", textOf(a, synccore.PartText))
			}
		}},
		{"scenario:help", func(t *testing.T, a synccore.Message) {
			if !strings.Contains(textOf(a, synccore.PartText), "- approval:") {
				t.Fatal("help lists the scenarios")
			}
		}},
		{"scenario:text chars=300 delta=7", func(t *testing.T, a synccore.Message) {
			if n := utf8.RuneCountInString(textOf(a, synccore.PartText)); n != 300 {
				t.Fatalf("%d runes", n)
			}
		}},
		{"scenario:reasoning chars=80", func(t *testing.T, a synccore.Message) {
			if a.Parts[0].Type != synccore.PartReasoning || a.Parts[0].State != synccore.StateDone || textOf(a, synccore.PartText) == "" {
				t.Fatalf("parts %+v", a.Parts)
			}
		}},
		{"scenario:tools city=Oslo", func(t *testing.T, a synccore.Message) {
			tools := partsOf(a, synccore.PartTool)
			if len(tools) != 2 || tools[0].ToolName != "get_weather" || tools[1].ToolName != "calculator" {
				t.Fatalf("tools %+v", tools)
			}
			for _, p := range tools {
				if p.State != synccore.ToolOutputAvailable || p.Output == nil {
					t.Fatalf("tool %+v", p)
				}
			}
			if tools[0].StepID != "step-1" || tools[1].StepID != "step-2" || a.Parts[len(a.Parts)-1].StepID != "step-3" {
				t.Fatalf("step ids: %+v", a.Parts)
			}
			if !strings.Contains(textOf(a, synccore.PartText), "In Oslo it is") {
				t.Fatalf("answer %q", textOf(a, synccore.PartText))
			}
		}},
		{"scenario:error chars=100", func(t *testing.T, a synccore.Message) {
			errs := partsOf(a, synccore.PartError)
			if len(errs) != 1 || errs[0].Code != CodeModelError || errs[0].Scope != synccore.ErrorScopeTurn || !errs[0].Recoverable {
				t.Fatalf("error parts %+v", errs)
			}
			if n := utf8.RuneCountInString(textOf(a, synccore.PartText)); n == 0 || n >= 100 {
				t.Fatalf("kept %d runes of the failed stream", n)
			}
			if a.Parts[0].State != synccore.StateDone {
				t.Fatal("the partial text is closed")
			}
		}},
		{"scenario:long chars=20000 delta=16", func(t *testing.T, a synccore.Message) {
			if n := utf8.RuneCountInString(textOf(a, synccore.PartText)); n != 20000 {
				t.Fatalf("%d runes", n)
			}
		}},
		{"scenario:data", func(t *testing.T, a synccore.Message) {
			if d := partsOf(a, synccore.PartData); len(d) != 1 || d[0].DataType != "chart" || d[0].Data == nil {
				t.Fatalf("data %+v", d)
			}
		}},
		{"scenario:file", func(t *testing.T, a synccore.Message) {
			if f := partsOf(a, synccore.PartFile); len(f) != 1 || f[0].MediaType != "text/plain" || f[0].Filename != "hello.txt" {
				t.Fatalf("file %+v", f)
			}
		}},
	}
	e := newEnv(t, Config{})
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			e.t = t
			sid := e.session("")
			d := e.driver(sid)
			u := e.post(sid, tc.text)
			d.converge()
			a := e.lastAgent(sid)
			if a.State != synccore.MessageDone || a.TurnID != u.TurnID || a.Sequence != u.Sequence+1 {
				t.Fatalf("agent message %d %s turn %s, user %d turn %s", a.Sequence, a.State, a.TurnID, u.Sequence, u.TurnID)
			}
			for i, p := range a.Parts {
				if p.Sequence != int64(i+1) || p.PartID == "" {
					t.Fatalf("part %d: %+v", i, p)
				}
			}
			if view, _ := d.viewAgent(); view.Revision != a.Revision {
				t.Fatalf("client holds revision %d, committed %d", view.Revision, a.Revision)
			}
			checkSeqs(t, d.frames)
			tc.check(t, a)
		})
	}
}

// checkSeqs proves the frames of one subscription were numbered 1.. gapless.
func checkSeqs(t *testing.T, frames []synccore.Frame) {
	t.Helper()
	for i, f := range frames {
		if f.Seq != uint64(i+1) {
			t.Fatalf("frame %d has seq %d", i, f.Seq)
		}
	}
	if len(frames) == 0 || frames[0].Kind != synccore.FrameHello {
		t.Fatal("the first frame is the hello")
	}
}

// A 10,000-delta answer costs a handful of commits: deltas never reach
// SQLite.
func TestLongAnswerCostsAHandfulOfCommits(t *testing.T) {
	// The model runs unpaced here, faster than this test's client reads:
	// the deltas it has not read wait folded, so the subscription stays
	// whole with the default queue.
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	before := e.st.CommitCount()
	e.post(sid, "scenario:long chars=10000 delta=1")
	d.converge()
	d.drain()
	commits := e.st.CommitCount() - before
	deltas, streamed := 0, 0
	for _, f := range d.frames {
		if f.Kind == synccore.FrameDelta {
			deltas++
			streamed += len(f.Text)
		}
	}
	t.Logf("%d deltas (10,000 runes folded into them), %d commits, %d subscriptions", deltas, commits, d.subs)
	m, ok := d.viewAgent()
	if want := len(textOf(m, synccore.PartText)); !ok || streamed != want || d.subs != 1 {
		t.Fatalf("%d bytes of deltas streamed in %d subscriptions, want the answer's %d in 1", streamed, d.subs, want)
	}
	// user message, agent message created, step committed and closed.
	if commits > 3 {
		t.Fatalf("%d commits for one answer", commits)
	}
}

// An internal message is persisted and hidden from default reads, and the
// composer reads it back: the model answers it.
func TestInternalMessageReachesTheModel(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	msg, err := e.m.PostMessage(e.ctx, sid, PostMessage{
		Parts:      []synccore.Part{{Type: synccore.PartText, Text: "scenario:text chars=42"}},
		Visibility: synccore.VisibilityInternal,
	})
	if err != nil {
		t.Fatal(err)
	}
	d.converge()
	a := e.lastAgent(sid)
	if n := utf8.RuneCountInString(textOf(a, synccore.PartText)); n != 42 {
		t.Fatalf("the model answered %d runes, want 42 (it must have read the internal message)", n)
	}
	page, err := e.m.Messages(e.ctx, sid, storeQuery(0, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		if it.MessageID == msg.MessageID {
			t.Fatal("an internal message in a default read")
		}
	}
	withInternal, err := e.m.Messages(e.ctx, sid, storeQuery(0, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(withInternal.Items) != len(page.Items)+1 {
		t.Fatalf("include_internal: %d items, default %d", len(withInternal.Items), len(page.Items))
	}
}
