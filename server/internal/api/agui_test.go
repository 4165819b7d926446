package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// aguiServer is a real server on loopback over a real SQLite file.
func aguiServer(t *testing.T, speed model.Speed) (*httptest.Server, *session.Manager) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agui.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mgr, err := session.NewManager(ctx, session.Config{Store: st, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Shutdown(context.Background()) })
	srv := httptest.NewServer(New(Config{Manager: mgr}))
	t.Cleanup(srv.Close)
	return srv, mgr
}

type aguiEv map[string]any

func (e aguiEv) str(k string) string { s, _ := e[k].(string); return s }

// aguiPost runs the agent and reads events until stop says so or the
// stream ends.
func aguiPost(t *testing.T, url string, input map[string]any, stop func(aguiEv) bool) []aguiEv {
	t.Helper()
	body, _ := json.Marshal(input)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/agui", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("X-Vercel-AI-UI-Message-Stream") != "" {
		t.Fatalf("status %d, headers %v", res.StatusCode, res.Header)
	}
	var evs []aguiEv
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev aguiEv
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		evs = append(evs, ev)
		if stop != nil && stop(ev) {
			break
		}
	}
	return evs
}

func aguiTypes(evs []aguiEv) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.str("type"))
	}
	return out
}

// aguiApply assembles messages from events as @ag-ui/client does (its
// default apply), for the events this server sends.
func aguiApply(msgs []aguiMsg, evs []aguiEv) []aguiMsg {
	find := func(id string) int {
		for i, m := range msgs {
			if m["id"] == id {
				return i
			}
		}
		return -1
	}
	findCall := func(id string) map[string]any {
		for _, m := range msgs {
			calls, _ := m["toolCalls"].([]any)
			for _, c := range calls {
				if c.(map[string]any)["id"] == id {
					return c.(map[string]any)
				}
			}
		}
		return nil
	}
	for _, e := range evs {
		switch e.str("type") {
		case "MESSAGES_SNAPSHOT":
			var snap []aguiMsg
			b, _ := json.Marshal(e["messages"])
			_ = json.Unmarshal(b, &snap)
			msgs = snap
		case "TEXT_MESSAGE_START", "REASONING_MESSAGE_START":
			if find(e.str("messageId")) < 0 {
				role := "assistant"
				if e.str("type") == "REASONING_MESSAGE_START" {
					role = "reasoning"
				}
				msgs = append(msgs, aguiMsg{"id": e.str("messageId"), "role": role, "content": ""})
			}
		case "TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT":
			m := msgs[find(e.str("messageId"))]
			m["content"] = m["content"].(string) + e.str("delta")
		case "TOOL_CALL_START":
			if findCall(e.str("toolCallId")) != nil {
				continue
			}
			j := find(e.str("parentMessageId"))
			if j < 0 {
				msgs = append(msgs, aguiMsg{"id": e.str("parentMessageId"), "role": "assistant", "toolCalls": []any{}})
				j = len(msgs) - 1
			}
			calls, _ := msgs[j]["toolCalls"].([]any)
			msgs[j]["toolCalls"] = append(calls, map[string]any{"id": e.str("toolCallId"), "type": "function",
				"function": map[string]any{"name": e.str("toolCallName"), "arguments": ""}})
		case "TOOL_CALL_ARGS":
			f := findCall(e.str("toolCallId"))["function"].(map[string]any)
			f["arguments"] = f["arguments"].(string) + e.str("delta")
		case "TOOL_CALL_RESULT":
			res := aguiMsg{"id": e.str("messageId"), "role": "tool", "toolCallId": e.str("toolCallId"), "content": e["content"]}
			j := -1
			for i, m := range msgs {
				calls, _ := m["toolCalls"].([]any)
				for _, c := range calls {
					if c.(map[string]any)["id"] == e.str("toolCallId") {
						j = i
					}
				}
			}
			if j < 0 {
				msgs = append(msgs, res)
				continue
			}
			k := j + 1
			for k < len(msgs) && msgs[k]["role"] == "tool" {
				k++
			}
			msgs = append(msgs[:k], append([]aguiMsg{res}, msgs[k:]...)...)
		case "ACTIVITY_SNAPSHOT":
			act := aguiMsg{"id": e.str("messageId"), "role": "activity", "activityType": e.str("activityType"), "content": e["content"]}
			if j := find(e.str("messageId")); j >= 0 {
				msgs[j] = act
			} else {
				msgs = append(msgs, act)
			}
		}
	}
	return msgs
}

// aguiSynced is the AG-UI list of the session's messages, as JSON.
func aguiSynced(t *testing.T, mgr *session.Manager, sid string) []aguiMsg {
	t.Helper()
	page, err := mgr.Messages(context.Background(), sid, store.PageQuery{Limit: aguiSnapshotLimit})
	if err != nil {
		t.Fatal(err)
	}
	return asJSON(t, aguiMessages(page.Items))
}

func asJSON(t *testing.T, v []aguiMsg) []aguiMsg {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []aguiMsg
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func aguiInputOf(thread, text string, history ...aguiMsg) map[string]any {
	msgs := append([]aguiMsg{}, history...)
	if text != "" {
		msgs = append(msgs, aguiMsg{"id": fmt.Sprintf("client-%d", time.Now().UnixNano()), "role": "user", "content": text})
	}
	return map[string]any{"threadId": thread, "runId": fmt.Sprintf("run-%d", time.Now().UnixNano()), "messages": msgs,
		"tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{}}
}

func finishOutcome(t *testing.T, evs []aguiEv) map[string]any {
	t.Helper()
	last := evs[len(evs)-1]
	if last.str("type") != "RUN_FINISHED" {
		t.Fatalf("the run did not finish: %v", aguiTypes(evs))
	}
	out, _ := last["outcome"].(map[string]any)
	return out
}

// TestAGUIToolLoop: a new thread id makes the session; the run posts the
// user message, snapshots the history, streams a reply of three steps
// with two tool calls and their results, and finishes. The messages the
// events assemble equal the session's own.
func TestAGUIToolLoop(t *testing.T) {
	t.Parallel()
	srv, mgr := aguiServer(t, model.Speed{})
	thread := "thread-tools-1"
	evs := aguiPost(t, srv.URL, aguiInputOf(thread, "scenario:tools city=Oslo"), nil)
	types := aguiTypes(evs)
	if types[0] != "RUN_STARTED" || types[1] != "MESSAGES_SNAPSHOT" {
		t.Fatalf("events start %v", types)
	}
	if out := finishOutcome(t, evs); out["type"] != "success" {
		t.Fatalf("outcome %v", out)
	}
	if owner, err := mgr.Owner(context.Background(), thread); err != nil || owner != "" {
		t.Fatalf("the thread's session: owner %q, %v", owner, err)
	}
	got := asJSON(t, aguiApply(nil, evs))
	want := aguiSynced(t, mgr, thread)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assembled\n%v\nsynced\n%v", got, want)
	}
	var results, calls int
	for _, m := range want {
		if m["role"] == "tool" {
			results++
		}
		c, _ := m["toolCalls"].([]any)
		calls += len(c)
	}
	if results != 2 || calls != 2 || want[0]["role"] != "user" || want[0]["content"] != "scenario:tools city=Oslo" {
		t.Fatalf("%d calls, %d results: %v", calls, results, want)
	}
	if text, _ := want[len(want)-1]["content"].(string); !strings.HasPrefix(text, "In Oslo it is") {
		t.Fatalf("last message %v", want[len(want)-1])
	}
	// The same history posted again (HttpAgent sends it all) posts nothing.
	again := aguiPost(t, srv.URL, aguiInputOf(thread, "", got...), nil)
	if tt := aguiTypes(again); !reflect.DeepEqual(tt, []string{"RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"}) {
		t.Fatalf("a run with no new message: %v", tt)
	}
	if now := aguiSynced(t, mgr, thread); !reflect.DeepEqual(now, want) {
		t.Fatalf("the history changed: %v", now)
	}
}

// TestAGUIApprovalInterrupt: the run ends on the approval with an
// interrupt outcome; the next run's resume answers it and the same
// message streams on to its end.
func TestAGUIApprovalInterrupt(t *testing.T) {
	t.Parallel()
	for _, approved := range []bool{true, false} {
		t.Run(fmt.Sprint(approved), func(t *testing.T) {
			t.Parallel()
			srv, mgr := aguiServer(t, model.Speed{})
			thread := fmt.Sprintf("thread-approval-%v", approved)
			evs := aguiPost(t, srv.URL, aguiInputOf(thread, "scenario:approval"), nil)
			out := finishOutcome(t, evs)
			ins, _ := out["interrupts"].([]any)
			if out["type"] != "interrupt" || len(ins) != 1 {
				t.Fatalf("outcome %v", out)
			}
			in := ins[0].(map[string]any)
			if in["reason"] != "approval" || !strings.HasSuffix(in["toolCallId"].(string), ":call-1-1") {
				t.Fatalf("interrupt %v", in)
			}
			have := aguiApply(nil, evs)
			if got, want := asJSON(t, have), aguiSynced(t, mgr, thread); !reflect.DeepEqual(got, want) {
				t.Fatalf("before the answer: assembled\n%v\nsynced\n%v", got, want)
			}
			// A reconnect meanwhile reports the same interrupt.
			re := aguiPost(t, srv.URL, aguiInputOf(thread, "", have...), nil)
			if o := finishOutcome(t, re); !reflect.DeepEqual(o, out) {
				t.Fatalf("reconnect outcome %v, want %v", o, out)
			}
			input := aguiInputOf(thread, "", have...)
			input["resume"] = []any{map[string]any{"interruptId": in["id"], "status": "resolved", "payload": map[string]any{"approved": approved}}}
			evs2 := aguiPost(t, srv.URL, input, nil)
			if o := finishOutcome(t, evs2); o["type"] != "success" {
				t.Fatalf("resumed outcome %v", o)
			}
			got := asJSON(t, aguiApply(have, evs2))
			want := aguiSynced(t, mgr, thread)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after the answer: assembled\n%v\nsynced\n%v", got, want)
			}
			last, _ := want[len(want)-1]["content"].(string)
			if approved != strings.HasPrefix(last, "Done: the email was sent") {
				t.Fatalf("approved %v, reply %q", approved, last)
			}
		})
	}
}

// TestAGUIReconnectMidStream: the client cuts the run in the middle of a
// long answer; a run with no new message gets the answer so far in the
// snapshot and then the rest: no character lost or doubled.
func TestAGUIReconnectMidStream(t *testing.T) {
	t.Parallel()
	srv, mgr := aguiServer(t, model.Paced(time.Millisecond))
	thread := "thread-cut"
	n := 0
	first := aguiPost(t, srv.URL, aguiInputOf(thread, "scenario:long chars=6000 delta=5"), func(e aguiEv) bool {
		if e.str("type") == "TEXT_MESSAGE_CONTENT" {
			n++
		}
		return n == 20
	})
	have := aguiApply(nil, first)
	partial, _ := have[len(have)-1]["content"].(string)
	if len([]rune(partial)) >= 6000 || len(partial) == 0 {
		t.Fatalf("cut after %d bytes", len(partial))
	}
	second := aguiPost(t, srv.URL, aguiInputOf(thread, "", have...), nil)
	if second[1].str("type") != "MESSAGES_SNAPSHOT" {
		t.Fatalf("events %v", aguiTypes(second)[:2])
	}
	snap := aguiApply(nil, second[:2])
	if text, _ := snap[len(snap)-1]["content"].(string); !strings.HasPrefix(text, partial) {
		t.Fatalf("the snapshot holds %d bytes, not the %d the client had", len(text), len(partial))
	}
	got := asJSON(t, aguiApply(have, second))
	want := aguiSynced(t, mgr, thread)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assembled %d messages, synced %d", len(got), len(want))
	}
	text, _ := want[len(want)-1]["content"].(string)
	if len([]rune(text)) != 6000 {
		t.Fatalf("final text of %d runes", len([]rune(text)))
	}
	page, _ := mgr.Messages(context.Background(), thread, store.PageQuery{Limit: 1})
	if page.Items[0].State != synccore.MessageDone {
		t.Fatalf("the reply is %s", page.Items[0].State)
	}
}

// TestAGUIReasoningAndData: reasoning is a reasoning message with its own
// span, a data part an activity; the events assemble the session's list.
func TestAGUIReasoningAndData(t *testing.T) {
	t.Parallel()
	srv, mgr := aguiServer(t, model.Paced(time.Millisecond))
	for _, sc := range []struct{ text, want string }{
		{"scenario:reasoning chars=80", "REASONING_START REASONING_MESSAGE_START REASONING_MESSAGE_CONTENT REASONING_MESSAGE_END REASONING_END"},
		{"scenario:data", "ACTIVITY_SNAPSHOT"},
	} {
		thread := fmt.Sprintf("thread-%d", time.Now().UnixNano())
		evs := aguiPost(t, srv.URL, aguiInputOf(thread, sc.text), nil)
		var kept []string
		for _, typ := range aguiTypes(evs) {
			if strings.HasPrefix(typ, "REASONING") || typ == "ACTIVITY_SNAPSHOT" {
				if len(kept) == 0 || kept[len(kept)-1] != typ {
					kept = append(kept, typ)
				}
			}
		}
		if got := strings.Join(kept, " "); got != sc.want {
			t.Fatalf("%s: %s", sc.text, got)
		}
		got, want := asJSON(t, aguiApply(nil, evs)), aguiSynced(t, mgr, thread)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: assembled\n%v\nsynced\n%v", sc.text, got, want)
		}
		roles := ""
		for _, m := range want {
			roles += fmt.Sprint(m["role"], " ")
		}
		if sc.text == "scenario:data" && roles != "user assistant activity " || sc.text != "scenario:data" && roles != "user reasoning assistant " {
			t.Fatalf("%s: roles %s", sc.text, roles)
		}
	}
}

// TestAGUIQuestion: a question is an interrupt with its text; a resume
// with a bare string answers it, and a cancelled one stops the turn.
func TestAGUIQuestion(t *testing.T) {
	t.Parallel()
	srv, mgr := aguiServer(t, model.Speed{})
	for _, cancel := range []bool{false, true} {
		thread := fmt.Sprintf("thread-question-%v", cancel)
		evs := aguiPost(t, srv.URL, aguiInputOf(thread, "scenario:question"), nil)
		out := finishOutcome(t, evs)
		ins, _ := out["interrupts"].([]any)
		if out["type"] != "interrupt" || len(ins) != 1 {
			t.Fatalf("outcome %v", out)
		}
		in := ins[0].(map[string]any)
		if in["reason"] != "question" || in["message"] != "Which colour do you prefer?" {
			t.Fatalf("interrupt %v", in)
		}
		have := aguiApply(nil, evs)
		input := aguiInputOf(thread, "", have...)
		entry := map[string]any{"interruptId": in["id"], "status": "resolved", "payload": "blue"}
		if cancel {
			entry = map[string]any{"interruptId": in["id"], "status": "cancelled"}
		}
		input["resume"] = []any{entry}
		evs2 := aguiPost(t, srv.URL, input, nil)
		if o := finishOutcome(t, evs2); o["type"] != "success" {
			t.Fatalf("resumed outcome %v", o)
		}
		got, want := asJSON(t, aguiApply(have, evs2)), aguiSynced(t, mgr, thread)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("assembled\n%v\nsynced\n%v", got, want)
		}
		last := want[len(want)-1]
		switch {
		case !cancel && last["content"] != `You answered "blue". Good choice!`:
			t.Fatalf("answered: last %v", last)
		case cancel && (last["activityType"] != "agentsync-error" || last["content"].(map[string]any)["code"] != "stopped"):
			t.Fatalf("cancelled: last %v", last)
		}
	}
}

// TestAGUIEventSequence: the events of a paced tool loop, runs of one type
// folded into one: each text and tool call opened, filled and closed in
// part order, results after their calls, one run.
func TestAGUIEventSequence(t *testing.T) {
	t.Parallel()
	srv, _ := aguiServer(t, model.Paced(time.Millisecond))
	evs := aguiPost(t, srv.URL, aguiInputOf("thread-sequence", "scenario:tools"), nil)
	var folded []string
	for _, typ := range aguiTypes(evs) {
		if len(folded) == 0 || folded[len(folded)-1] != typ {
			folded = append(folded, typ)
		}
	}
	text := []string{"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"}
	call := []string{"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"}
	want := []string{"RUN_STARTED", "MESSAGES_SNAPSHOT"}
	want = append(append(append(append(append(append(want, text...), call...), text...), call...), text...), "RUN_FINISHED")
	if !reflect.DeepEqual(folded, want) {
		t.Fatalf("events\n%v\nwant\n%v", folded, want)
	}
}

// TestAGUIEmitterReopensAcrossRuns: a text still streaming when a run
// ends is closed for RUN_FINISHED and opened again by the next run, which
// sends only the rest; a tool call cut while its input streams gets its
// arguments in the next run once, its result once.
func TestAGUIEmitterReopensAcrossRuns(t *testing.T) {
	t.Parallel()
	m := synccore.Message{MessageID: "msg_1", Role: synccore.RoleAgent, State: synccore.MessageStreaming, Parts: []synccore.Part{
		{PartID: "p1", Type: synccore.PartText, State: synccore.StateStreaming, Text: "Hel"},
		{PartID: "p2", Type: synccore.PartTool, ToolCallID: "c1", ToolName: "get_weather", State: synccore.ToolInputStreaming},
	}}
	rec := httptest.NewRecorder()
	em := newAGUIEmitter(rec)
	if err := em.emit(&m); err != nil {
		t.Fatal(err)
	}
	if err := em.closeAll(); err != nil {
		t.Fatal(err)
	}
	m.Parts[0].Text, m.Parts[0].State = "Hello", synccore.StateDone
	m.Parts[1].State, m.Parts[1].Input = synccore.ToolInputAvailable, map[string]any{"city": "Oslo"}
	for range 2 {
		if err := em.emit(&m); err != nil {
			t.Fatal(err)
		}
	}
	m.Parts[1].State, m.Parts[1].Output = synccore.ToolOutputAvailable, map[string]any{"temperature_c": 3}
	if err := em.emit(&m); err != nil {
		t.Fatal(err)
	}
	var evs []aguiEv
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev aguiEv
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	want := []string{"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TOOL_CALL_START", "TEXT_MESSAGE_END", "TOOL_CALL_END",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"}
	if got := aguiTypes(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n%v\nwant\n%v", got, want)
	}
	got := asJSON(t, aguiApply(nil, evs))
	if wantMsgs := asJSON(t, aguiMessages([]synccore.Message{m})); !reflect.DeepEqual(got, wantMsgs) {
		t.Fatalf("assembled\n%v\nwant\n%v", got, wantMsgs)
	}
	if got[0]["content"] != "Hello" {
		t.Fatalf("text %v", got[0]["content"])
	}
}

// TestAGUIAuth: the endpoint takes the bearer token as every endpoint
// does; a thread of another principal is not found (and not made again),
// one of the caller's own is used.
func TestAGUIAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agui.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mgr, err := session.NewManager(ctx, session.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown(ctx)
	authz := auth.Func(func(_ *http.Request, token string) (string, error) {
		if token == "alice" || token == "bob" {
			return token, nil
		}
		return "", fmt.Errorf("unknown token")
	})
	srv := httptest.NewServer(New(Config{Manager: mgr, Authorizer: authz}))
	defer srv.Close()
	run := func(token, thread string) (int, string) {
		body, _ := json.Marshal(aguiInputOf(thread, "hello"))
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/agui", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		c := &http.Client{Timeout: 20 * time.Second}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		return res.StatusCode, b.String()
	}
	if status, _ := run("", "thread-auth"); status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", status)
	}
	if status, body := run("alice", "thread-auth"); status != http.StatusOK || !strings.Contains(body, "RUN_FINISHED") {
		t.Fatalf("alice: %d %s", status, body)
	}
	if owner, err := mgr.Owner(ctx, "thread-auth"); err != nil || owner != "alice" {
		t.Fatalf("owner %q, %v", owner, err)
	}
	if status, body := run("bob", "thread-auth"); status != http.StatusNotFound || !strings.Contains(body, "not_found") {
		t.Fatalf("bob on alice's thread: %d %s", status, body)
	}
	if status, _ := run("alice", "no spaces allowed"); status != http.StatusBadRequest {
		t.Fatalf("a thread id that cannot name a session: %d", status)
	}
	page, err := mgr.Messages(ctx, "thread-auth", store.PageQuery{})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("alice's thread holds %d messages, %v", len(page.Items), err)
	}
}
