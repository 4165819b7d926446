package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/agentsync/agentsync/synccore"
)

// uiEmitter turns successive states of one agent message into the AI SDK's
// UI message stream (server-sent events of JSON chunks, protocol v1). It
// remembers what it has sent per part and sends only the difference, so a
// stream that starts late (a resume) first replays the message so far.
// The chunks build, in the AI SDK's reader, the UIMessage that
// toUIMessage (js/ai.js) makes of the same message; a test holds them equal.
type uiEmitter struct {
	w       io.Writer
	flush   func() error
	started bool
	sent    map[string]*sentPart // by part_id
}

// sentPart is what the client already has of one part.
type sentPart struct {
	started   bool   // text-start / reasoning-start / file sent
	textLen   int    // bytes of text or reasoning sent
	ended     bool   // text-end / reasoning-end sent
	toolStage int    // see toolStage*
	data      string // the JSON of the last data chunk
}

// The stages a tool part goes through in the UI stream.
const (
	toolNone = iota
	toolStarted
	toolInputAvailable
	toolApprovalRequested
	toolApprovalResponded
	toolFinal
)

func newUIEmitter(w http.ResponseWriter) *uiEmitter {
	rc := http.NewResponseController(w)
	return &uiEmitter{w: w, flush: rc.Flush, sent: map[string]*sentPart{}}
}

// startSSE writes the response head of a UI message stream.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Vercel-AI-UI-Message-Stream", "v1")
	w.WriteHeader(http.StatusOK)
}

type chunk map[string]any

func (e *uiEmitter) write(c chunk) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("ui stream: encode %v chunk: %w", c["type"], err)
	}
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", b); err != nil {
		return fmt.Errorf("ui stream: write: %w", err)
	}
	return nil
}

// emit sends what m has that the client does not, then flushes.
func (e *uiEmitter) emit(m *synccore.Message) error {
	if !e.started {
		e.started = true
		if err := e.write(chunk{"type": "start", "messageId": m.MessageID}); err != nil {
			return err
		}
	}
	approvals := approvalsByTool(m)
	for i := range m.Parts {
		p := &m.Parts[i]
		s := e.sent[p.PartID]
		if s == nil {
			s = &sentPart{}
			e.sent[p.PartID] = s
		}
		var err error
		switch p.Type {
		case synccore.PartText, synccore.PartReasoning:
			err = e.text(p, s)
		case synccore.PartTool:
			err = e.tool(p, s, approvals[p.ToolCallID])
		case synccore.PartFile:
			if !s.started {
				s.started = true
				err = e.write(chunk{"type": "file", "url": p.URL, "mediaType": p.MediaType})
			}
		default:
			if c := dataChunk(p); c != nil {
				err = e.data(c, s)
			}
		}
		if err != nil {
			return err
		}
	}
	return e.flush()
}

// seed records what the client already has of m: the UIMessage parts it
// sent back (useChat posts its messages), in the order toUIMessage gives
// them, so that the stream continues that message instead of repeating it.
func (e *uiEmitter) seed(m *synccore.Message, client []uiPart) {
	e.started = true
	approvals := approvalsByTool(m)
	j := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		c := dataChunk(p)
		if c == nil && p.Type != synccore.PartText && p.Type != synccore.PartReasoning && p.Type != synccore.PartTool && p.Type != synccore.PartFile {
			continue // no UIMessage part of its own
		}
		if j >= len(client) {
			return
		}
		have := client[j]
		j++
		s := &sentPart{started: true, textLen: min(len(have.Text), len(p.Text)), ended: have.State == string(synccore.StateDone)}
		switch p.Type {
		case synccore.PartTool:
			s.toolStage = uiToolStage[have.State]
			if s.toolStage >= toolApprovalRequested && approvals[p.ToolCallID] == nil {
				s.toolStage = toolInputAvailable
			}
		default:
			// A data part with an id is sent again (the client replaces it
			// in place, so it gets the latest); one without would be added
			// twice, so it counts as sent.
			if _, hasID := c["id"]; c != nil && !hasID {
				if b, err := json.Marshal(c); err == nil {
					s.data = string(b)
				}
			}
		}
		e.sent[p.PartID] = s
	}
}

// uiToolStage is the stage of each AI SDK tool state.
var uiToolStage = map[string]int{
	"input-streaming":    toolStarted,
	"input-available":    toolInputAvailable,
	"approval-requested": toolApprovalRequested,
	"approval-responded": toolApprovalResponded,
	"output-available":   toolFinal,
	"output-error":       toolFinal,
	"output-denied":      toolFinal,
}

// finish ends the stream.
func (e *uiEmitter) finish() error {
	if err := e.write(chunk{"type": "finish"}); err != nil {
		return err
	}
	if _, err := io.WriteString(e.w, "data: [DONE]\n\n"); err != nil {
		return fmt.Errorf("ui stream: write: %w", err)
	}
	return e.flush()
}

func (e *uiEmitter) text(p *synccore.Part, s *sentPart) error {
	kind := string(p.Type) // "text" or "reasoning"
	if !s.started {
		s.started = true
		if err := e.write(chunk{"type": kind + "-start", "id": p.PartID}); err != nil {
			return err
		}
	}
	if len(p.Text) > s.textLen {
		delta := completeRunes(p.Text[s.textLen:])
		if delta != "" {
			s.textLen += len(delta)
			if err := e.write(chunk{"type": kind + "-delta", "id": p.PartID, "delta": delta}); err != nil {
				return err
			}
		}
	}
	if p.State == synccore.StateDone && !s.ended && s.textLen == len(p.Text) {
		s.ended = true
		return e.write(chunk{"type": kind + "-end", "id": p.PartID})
	}
	return nil
}

// completeRunes drops a rune cut at the end of s (a delta never cuts one,
// but the stream must not send invalid UTF-8 if one did).
func completeRunes(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0 && !utf8.ValidString(s); i++ {
		s = s[:len(s)-1]
	}
	return s
}

// tool walks a tool part through the AI SDK's states up to where p is.
func (e *uiEmitter) tool(p *synccore.Part, s *sentPart, approval *synccore.Part) error {
	target := toolTarget(p, approval)
	for stage := s.toolStage + 1; stage <= target; stage++ {
		var c chunk
		switch stage {
		case toolStarted:
			c = chunk{"type": "tool-input-start", "toolCallId": p.ToolCallID, "toolName": p.ToolName}
		case toolInputAvailable:
			c = chunk{"type": "tool-input-available", "toolCallId": p.ToolCallID, "toolName": p.ToolName, "input": p.Input}
		case toolApprovalRequested:
			if approval != nil {
				c = chunk{"type": "tool-approval-request", "toolCallId": p.ToolCallID, "approvalId": approval.InteractionID}
			}
		case toolApprovalResponded:
			if approved, ok := approvalAnswer(approval); ok {
				c = chunk{"type": "tool-approval-response", "approvalId": approval.InteractionID, "approved": approved}
			}
		case toolFinal:
			switch p.State {
			case synccore.ToolOutputAvailable:
				c = chunk{"type": "tool-output-available", "toolCallId": p.ToolCallID, "output": p.Output}
			case synccore.ToolOutputError:
				c = chunk{"type": "tool-output-error", "toolCallId": p.ToolCallID, "errorText": toolErrorText(p.Output)}
			case synccore.ToolOutputDenied:
				c = chunk{"type": "tool-output-denied", "toolCallId": p.ToolCallID}
			}
		}
		if c != nil {
			if err := e.write(c); err != nil {
				return err
			}
		}
		s.toolStage = stage
	}
	return nil
}

// toolTarget is the stage a tool part in agentsync state p has reached.
// agentsync's running has no AI SDK name: after an approval it is
// approval-responded, else input-available.
func toolTarget(p *synccore.Part, approval *synccore.Part) int {
	_, answered := approvalAnswer(approval)
	switch p.State {
	case synccore.ToolInputStreaming:
		return toolStarted
	case synccore.ToolAwaitingApproval:
		if approval != nil {
			return toolApprovalRequested
		}
	case synccore.ToolRunning, synccore.ToolInputAvailable:
		if answered {
			return toolApprovalResponded
		}
	case synccore.ToolOutputAvailable, synccore.ToolOutputError, synccore.ToolOutputDenied:
		return toolFinal
	}
	return toolInputAvailable
}

func (e *uiEmitter) data(c chunk, s *sentPart) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("ui stream: encode %v chunk: %w", c["type"], err)
	}
	if string(b) == s.data {
		return nil
	}
	s.data = string(b)
	return e.write(c)
}

// dataChunk is the data-* chunk of a part the AI SDK has no type for, or
// nil for none (an approval is the tool's; a context is a user part).
func dataChunk(p *synccore.Part) chunk {
	switch p.Type {
	case synccore.PartData:
		c := chunk{"type": "data-" + p.DataType, "data": p.Data}
		if p.DataID != "" {
			c["id"] = p.DataID
		}
		return c
	case synccore.PartInteraction:
		if requestField(p, "kind") != "question" {
			return nil
		}
		d := map[string]any{"question": requestField(p, "question"), "tool_call_id": requestField(p, "tool_call_id"), "status": p.Status}
		if answer, ok := mapField(p.Response, "answer").(string); ok && answer != "" {
			d["answer"] = answer
		}
		return chunk{"type": "data-agentsync-question", "id": p.InteractionID, "data": d}
	case synccore.PartAction:
		d := map[string]any{"action_type": p.ActionType, "state": p.State}
		if p.Title != "" {
			d["title"] = p.Title
		}
		return chunk{"type": "data-agentsync-action", "id": p.ActionID, "data": d}
	case synccore.PartError:
		return chunk{"type": "data-agentsync-error", "id": p.PartID, "data": map[string]any{
			"scope": p.Scope, "code": p.Code, "message": p.Message, "recoverable": p.Recoverable}}
	}
	return nil
}

// approvalsByTool maps tool_call_id to the approval interaction gating it.
func approvalsByTool(m *synccore.Message) map[string]*synccore.Part {
	out := map[string]*synccore.Part{}
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type == synccore.PartInteraction && requestField(p, "kind") == "approval" {
			out[requestField(p, "tool_call_id")] = p
		}
	}
	return out
}

// approvalAnswer is the decision of a resolved approval.
func approvalAnswer(approval *synccore.Part) (approved, ok bool) {
	if approval == nil || approval.Status != synccore.InteractionResolved {
		return false, false
	}
	approved, _ = mapField(approval.Response, "approved").(bool)
	return approved, true
}

// toolErrorText is the errorText of a failed tool: its output's "error"
// field, the output itself if a string, or the output as JSON.
func toolErrorText(output any) string {
	if s, ok := mapField(output, "error").(string); ok {
		return s
	}
	if s, ok := output.(string); ok {
		return s
	}
	if output == nil {
		return "tool failed"
	}
	b, err := json.Marshal(output)
	if err != nil {
		return fmt.Sprint(output)
	}
	return string(b)
}

func requestField(p *synccore.Part, key string) string {
	s, _ := mapField(p.Request, key).(string)
	return s
}

// mapField reads key of a map as the server holds it (built in Go) or as
// msgpack decodes it.
func mapField(v any, key string) any {
	switch m := v.(type) {
	case map[string]any:
		return m[key]
	case map[any]any:
		return m[key]
	}
	return nil
}
