package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/agentsync/agentsync/synccore"
)

// The AG-UI projection of agentsync messages (docs/ag-ui.md). An agent
// message is several AG-UI messages, named by deterministic ids:
//
//	text part        assistant message; the first of a message that
//	                 precedes any tool part is the message_id itself, the
//	                 others message_id + ":" + part_id
//	reasoning part   reasoning message message_id + ":" + part_id
//	tool part        a tool call (id message_id + ":" + tool_call_id) of
//	                 the assistant message of the text before it, or of
//	                 an assistant message named message_id if none;
//	                 its result is the tool message toolCallId + ":result"
//	data, action,    activity messages message_id + ":" + part_id, of
//	error, file      types agentsync-data, -action, -error, -file
//
// aguiMessages builds the list an AG-UI client assembles from the events
// aguiEmitter sends for the same messages: the same ids, the same order
// (appended in part order; a tool result inserted after its call's
// assistant message and the results already there), the same fields. A
// MESSAGES_SNAPSHOT of it and a stream of events agree.

type aguiEvent map[string]any

// aguiMsg is one AG-UI message as JSON.
type aguiMsg = map[string]any

const (
	aguiText = iota
	aguiReasoning
	aguiTool
	aguiActivity
	aguiNone
)

// aguiKind is how a part appears in AG-UI.
func aguiKind(p *synccore.Part) int {
	switch p.Type {
	case synccore.PartText:
		return aguiText
	case synccore.PartReasoning:
		return aguiReasoning
	case synccore.PartTool:
		return aguiTool
	case synccore.PartData, synccore.PartAction, synccore.PartError, synccore.PartFile:
		return aguiActivity
	}
	return aguiNone // interactions are interrupts; context parts are the user's
}

// aguiIDs names the AG-UI messages of one agent message's parts.
type aguiIDs struct {
	msg     *synccore.Message
	parent  []string // per part index: a text's own id, a tool's parent id
	anchor  bool     // the first text is the message_id
	sawTool bool
}

func newAGUIIDs(m *synccore.Message) *aguiIDs {
	ids := &aguiIDs{msg: m, parent: make([]string, len(m.Parts))}
	current := ""
	for i := range m.Parts {
		p := &m.Parts[i]
		switch aguiKind(p) {
		case aguiText:
			if !ids.anchor && !ids.sawTool {
				ids.anchor = true
				current = m.MessageID
			} else {
				current = m.MessageID + ":" + p.PartID
			}
			ids.parent[i] = current
		case aguiTool:
			ids.sawTool = true
			if current == "" {
				current = m.MessageID
			}
			ids.parent[i] = current
		default:
			ids.parent[i] = m.MessageID + ":" + p.PartID
		}
	}
	return ids
}

func aguiToolCallID(m *synccore.Message, p *synccore.Part) string {
	return m.MessageID + ":" + p.ToolCallID
}

func aguiResultID(m *synccore.Message, p *synccore.Part) string {
	return aguiToolCallID(m, p) + ":result"
}

// aguiArgs is a tool's input as the arguments JSON, or "" while it streams.
func aguiArgs(p *synccore.Part) string {
	if p.State == synccore.ToolInputStreaming {
		return ""
	}
	b, err := json.Marshal(normalizeJSON(p.Input))
	if err != nil || p.Input == nil {
		return "{}"
	}
	return string(b)
}

// aguiToolFinal reports a tool part with a result.
func aguiToolFinal(p *synccore.Part) bool {
	switch p.State {
	case synccore.ToolOutputAvailable, synccore.ToolOutputError, synccore.ToolOutputDenied:
		return true
	}
	return false
}

// aguiResultContent is a tool result's content: an error's text, else the
// output as JSON (a string output as it is).
func aguiResultContent(p *synccore.Part) string {
	if p.State == synccore.ToolOutputError {
		return toolErrorText(p.Output)
	}
	if s, ok := p.Output.(string); ok {
		return s
	}
	b, err := json.Marshal(normalizeJSON(p.Output))
	if err != nil {
		return fmt.Sprint(p.Output)
	}
	return string(b)
}

// aguiActivityOf is the activity type and content of a data, action, error
// or file part.
func aguiActivityOf(p *synccore.Part) (string, map[string]any) {
	switch p.Type {
	case synccore.PartData:
		c := map[string]any{"data_type": p.DataType, "data": normalizeJSON(p.Data)}
		if p.DataID != "" {
			c["data_id"] = p.DataID
		}
		return "agentsync-data", c
	case synccore.PartAction:
		c := map[string]any{"action_id": p.ActionID, "action_type": p.ActionType, "state": string(p.State)}
		if p.Title != "" {
			c["title"] = p.Title
		}
		return "agentsync-action", c
	case synccore.PartError:
		return "agentsync-error", map[string]any{"scope": p.Scope, "code": p.Code, "message": p.Message, "recoverable": p.Recoverable}
	default: // file
		c := map[string]any{"url": p.URL, "media_type": p.MediaType}
		if p.Filename != "" {
			c["filename"] = p.Filename
		}
		return "agentsync-file", c
	}
}

// normalizeJSON turns msgpack's map[any]any into map[string]any, so a
// value encodes as JSON.
func normalizeJSON(v any) any {
	switch t := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[fmt.Sprint(k)] = normalizeJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalizeJSON(e)
		}
		return out
	}
	return v
}

// aguiUser is a user message: its text (text parts joined by a blank
// line), or content parts when it has files.
func aguiUser(m *synccore.Message) aguiMsg {
	var texts []string
	var parts []any
	hasFile := false
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case synccore.PartText:
			texts = append(texts, p.Text)
			parts = append(parts, map[string]any{"type": "text", "text": p.Text})
		case synccore.PartFile:
			hasFile = true
			parts = append(parts, map[string]any{"type": aguiMediaKind(p.MediaType),
				"source": map[string]any{"type": "url", "value": p.URL, "mimeType": p.MediaType}})
		}
	}
	out := aguiMsg{"id": m.MessageID, "role": "user"}
	if hasFile {
		out["content"] = parts
	} else {
		content := ""
		for i, t := range texts {
			if i > 0 {
				content += "\n\n"
			}
			content += t
		}
		out["content"] = content
	}
	return out
}

func aguiMediaKind(mediaType string) string {
	for _, k := range []string{"image", "audio", "video"} {
		if len(mediaType) > len(k) && mediaType[:len(k)+1] == k+"/" {
			return k
		}
	}
	return "document"
}

// aguiMessages is the AG-UI list of msgs (oldest first). Internal messages
// are left out by the page read already.
func aguiMessages(msgs []synccore.Message) []aguiMsg {
	out := []aguiMsg{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role == synccore.RoleUser {
			out = append(out, aguiUser(m))
			continue
		}
		out = appendAgent(out, m)
	}
	return out
}

func appendAgent(out []aguiMsg, m *synccore.Message) []aguiMsg {
	ids := newAGUIIDs(m)
	find := func(id string) int {
		for i := range out {
			if out[i]["id"] == id {
				return i
			}
		}
		return -1
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		id := ids.parent[i]
		switch aguiKind(p) {
		case aguiText:
			out = append(out, aguiMsg{"id": id, "role": "assistant", "content": p.Text})
		case aguiReasoning:
			out = append(out, aguiMsg{"id": id, "role": "reasoning", "content": p.Text})
		case aguiActivity:
			typ, content := aguiActivityOf(p)
			out = append(out, aguiMsg{"id": id, "role": "activity", "activityType": typ, "content": content})
		case aguiTool:
			j := find(id)
			if j < 0 {
				out = append(out, aguiMsg{"id": id, "role": "assistant", "toolCalls": []any{}})
				j = len(out) - 1
			}
			calls, _ := out[j]["toolCalls"].([]any)
			out[j]["toolCalls"] = append(calls, map[string]any{"id": aguiToolCallID(m, p), "type": "function",
				"function": map[string]any{"name": p.ToolName, "arguments": aguiArgs(p)}})
			if aguiToolFinal(p) {
				k := j + 1
				for k < len(out) && out[k]["role"] == "tool" {
					k++
				}
				res := aguiMsg{"id": aguiResultID(m, p), "role": "tool", "toolCallId": aguiToolCallID(m, p), "content": aguiResultContent(p)}
				out = append(out[:k], append([]aguiMsg{res}, out[k:]...)...)
			}
		}
	}
	return out
}

// aguiEmitter sends the AG-UI events that bring a client from what it has
// of one agent message to the message's current state. It remembers what
// it sent per part, so a run that starts from a snapshot (seed) sends
// only the rest; and, per run, which streams are open, so the run can
// close them before RUN_FINISHED (the protocol's rule) and the next run
// reopen them (a start naming an existing message continues it).
type aguiEmitter struct {
	w     io.Writer
	flush func() error
	sent  map[string]*aguiSent // by part_id
	open  []aguiOpen           // in opening order
}

type aguiSent struct {
	started bool // the AG-UI message or tool call exists on the client
	textLen int
	args    bool   // the arguments were sent
	result  bool   // the tool result was sent
	content string // the JSON of the last activity content sent
}

type aguiOpen struct {
	kind int
	id   string
}

func newAGUIEmitter(w http.ResponseWriter) *aguiEmitter {
	rc := http.NewResponseController(w)
	return &aguiEmitter{w: w, flush: rc.Flush, sent: map[string]*aguiSent{}}
}

func (e *aguiEmitter) write(ev aguiEvent) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("ag-ui stream: encode %v event: %w", ev["type"], err)
	}
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", b); err != nil {
		return fmt.Errorf("ag-ui stream: write: %w", err)
	}
	return nil
}

// seed records m as the client has it: all of it (a snapshot sent it).
func (e *aguiEmitter) seed(m *synccore.Message) {
	for i := range m.Parts {
		p := &m.Parts[i]
		s := &aguiSent{started: true, textLen: len(p.Text), args: aguiArgs(p) != "", result: aguiToolFinal(p)}
		if aguiKind(p) == aguiActivity {
			_, c := aguiActivityOf(p)
			if b, err := json.Marshal(c); err == nil {
				s.content = string(b)
			}
		}
		e.sent[p.PartID] = s
	}
}

func (e *aguiEmitter) isOpen(id string) bool {
	for _, o := range e.open {
		if o.id == id {
			return true
		}
	}
	return false
}

func (e *aguiEmitter) close(id string) error {
	for i, o := range e.open {
		if o.id != id {
			continue
		}
		e.open = append(e.open[:i], e.open[i+1:]...)
		switch o.kind {
		case aguiText:
			return e.write(aguiEvent{"type": "TEXT_MESSAGE_END", "messageId": id})
		case aguiReasoning:
			if err := e.write(aguiEvent{"type": "REASONING_MESSAGE_END", "messageId": id}); err != nil {
				return err
			}
			return e.write(aguiEvent{"type": "REASONING_END", "messageId": id})
		case aguiTool:
			return e.write(aguiEvent{"type": "TOOL_CALL_END", "toolCallId": id})
		}
	}
	return nil
}

// closeAll ends every stream the run opened, oldest first.
func (e *aguiEmitter) closeAll() error {
	for len(e.open) > 0 {
		if err := e.close(e.open[0].id); err != nil {
			return err
		}
	}
	return nil
}

// emit sends what m has that the client does not, then flushes.
func (e *aguiEmitter) emit(m *synccore.Message) error {
	ids := newAGUIIDs(m)
	for i := range m.Parts {
		p := &m.Parts[i]
		s := e.sent[p.PartID]
		if s == nil {
			s = &aguiSent{}
			e.sent[p.PartID] = s
		}
		var err error
		switch k := aguiKind(p); k {
		case aguiText, aguiReasoning:
			err = e.text(k, ids.parent[i], p, s)
		case aguiTool:
			err = e.tool(m, ids.parent[i], p, s)
		case aguiActivity:
			typ, c := aguiActivityOf(p)
			b, jerr := json.Marshal(c)
			if jerr != nil {
				return fmt.Errorf("ag-ui stream: encode activity: %w", jerr)
			}
			if string(b) != s.content {
				s.content, s.started = string(b), true
				err = e.write(aguiEvent{"type": "ACTIVITY_SNAPSHOT", "messageId": ids.parent[i], "activityType": typ, "content": c, "replace": true})
			}
		}
		if err != nil {
			return err
		}
	}
	return e.flush()
}

func (e *aguiEmitter) text(kind int, id string, p *synccore.Part, s *aguiSent) error {
	start := func() error {
		e.open = append(e.open, aguiOpen{kind, id})
		if kind == aguiText {
			return e.write(aguiEvent{"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"})
		}
		if err := e.write(aguiEvent{"type": "REASONING_START", "messageId": id}); err != nil {
			return err
		}
		return e.write(aguiEvent{"type": "REASONING_MESSAGE_START", "messageId": id, "role": "reasoning"})
	}
	if !s.started {
		s.started = true
		if err := start(); err != nil {
			return err
		}
	}
	if len(p.Text) > s.textLen {
		if delta := completeRunes(p.Text[s.textLen:]); delta != "" {
			if !e.isOpen(id) {
				if err := start(); err != nil {
					return err
				}
			}
			s.textLen += len(delta)
			typ := "TEXT_MESSAGE_CONTENT"
			if kind == aguiReasoning {
				typ = "REASONING_MESSAGE_CONTENT"
			}
			if err := e.write(aguiEvent{"type": typ, "messageId": id, "delta": delta}); err != nil {
				return err
			}
		}
	}
	if p.State == synccore.StateDone && s.textLen == len(p.Text) {
		return e.close(id)
	}
	return nil
}

func (e *aguiEmitter) tool(m *synccore.Message, parent string, p *synccore.Part, s *aguiSent) error {
	callID := aguiToolCallID(m, p)
	start := func() error {
		e.open = append(e.open, aguiOpen{aguiTool, callID})
		return e.write(aguiEvent{"type": "TOOL_CALL_START", "toolCallId": callID, "toolCallName": p.ToolName, "parentMessageId": parent})
	}
	if !s.started {
		s.started = true
		if err := start(); err != nil {
			return err
		}
	}
	if args := aguiArgs(p); args != "" && !s.args {
		if !e.isOpen(callID) {
			if err := start(); err != nil {
				return err
			}
		}
		s.args = true
		if err := e.write(aguiEvent{"type": "TOOL_CALL_ARGS", "toolCallId": callID, "delta": args}); err != nil {
			return err
		}
		if err := e.close(callID); err != nil {
			return err
		}
	}
	if aguiToolFinal(p) && !s.result {
		s.result = true
		return e.write(aguiEvent{"type": "TOOL_CALL_RESULT", "messageId": aguiResultID(m, p), "toolCallId": callID,
			"content": aguiResultContent(p), "role": "tool"})
	}
	return nil
}

// aguiInterrupts are the pending approvals and questions of m, as
// RUN_FINISHED's interrupt outcome names them.
func aguiInterrupts(m *synccore.Message) []any {
	if m == nil || m.Role != synccore.RoleAgent || m.State == synccore.MessageDone {
		return nil
	}
	var out []any
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type != synccore.PartInteraction || p.Status != synccore.InteractionPending {
			continue
		}
		kind := requestField(p, "kind")
		in := map[string]any{"id": p.InteractionID, "reason": kind}
		if call := requestField(p, "tool_call_id"); call != "" {
			in["toolCallId"] = m.MessageID + ":" + call
		}
		switch kind {
		case "approval":
			in["message"] = "Approve the call of " + aguiToolName(m, requestField(p, "tool_call_id")) + "?"
			in["responseSchema"] = map[string]any{"type": "object", "required": []any{"approved"},
				"properties": map[string]any{"approved": map[string]any{"type": "boolean"}}}
		case "question":
			in["message"] = requestField(p, "question")
			in["responseSchema"] = map[string]any{"type": "object", "required": []any{"answer"},
				"properties": map[string]any{"answer": map[string]any{"type": "string"}}}
		default:
			continue
		}
		in["metadata"] = map[string]any{"agentsync": map[string]any{"message_id": m.MessageID, "interaction_id": p.InteractionID,
			"request": normalizeJSON(p.Request)}}
		out = append(out, in)
	}
	return out
}

func aguiToolName(m *synccore.Message, callID string) string {
	for i := range m.Parts {
		if m.Parts[i].Type == synccore.PartTool && m.Parts[i].ToolCallID == callID {
			return m.Parts[i].ToolName
		}
	}
	return "a tool"
}
