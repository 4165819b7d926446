// Package composer turns a session's canonical history into model input.
// The runtime has no second input structure: whatever the model sees next
// (steers, internal recovery prompts, tool results) is read back from the
// committed history here.
package composer

import (
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// Compose builds the model input from history (the part of it the
// composer policy keeps, see budget.go and session/window.go), oldest first.
// Internal messages are included (that is what they are for); data parts,
// actions, errors and interactions never reach the model (an interaction's
// outcome reaches it through its tool's result). An agent message becomes
// one assistant entry per model step, each followed by the results of that
// step's finished tools, which is the alternation chat APIs expect. A user
// message that a turn's step read while the turn ran (a steer) is placed
// where the agent message's read marker says, not after the whole message.
func Compose(history []synccore.Message) []model.InputMessage {
	out := make([]model.InputMessage, 0, len(history))
	placed := steersRead(history)
	for i := range history {
		m := &history[i]
		switch {
		case m.Role == synccore.RoleUser && !placed[m.Sequence]:
			out = appendUser(out, m)
		case m.Role == synccore.RoleAgent:
			out = composeAgent(out, m, history[i+1:])
		}
	}
	return out
}

func appendUser(out []model.InputMessage, m *synccore.Message) []model.InputMessage {
	if in, ok := composeUser(m); ok {
		out = append(out, in)
	}
	return out
}

func composeUser(m *synccore.Message) (model.InputMessage, bool) {
	var content []model.InputContent
	for _, p := range m.Parts {
		switch p.Type {
		case synccore.PartText:
			content = append(content, model.InputContent{Type: model.ContentText, Text: p.Text})
		case synccore.PartContext:
			content = append(content, model.InputContent{Type: model.ContentText, Text: TagContext(p.Tag, p.Context)})
		case synccore.PartFile:
			content = append(content, fileContent(p))
		}
	}
	if len(content) == 0 {
		return model.InputMessage{}, false
	}
	return model.InputMessage{Role: model.RoleUser, Content: content, Internal: m.Visibility == synccore.VisibilityInternal}, true
}

// TagContext is how a context part enters the model's context:
// <tag>context</tag>.
func TagContext(tag, context string) string {
	return "<" + tag + ">" + context + "</" + tag + ">"
}

func fileContent(p synccore.Part) model.InputContent {
	return model.InputContent{Type: model.ContentFile, URL: p.URL, MediaType: p.MediaType, Filename: p.Filename}
}

// composeAgent appends the agent message's steps, in part order: a step is a
// run of parts with the same step_id. At a read marker it first appends the
// user messages of later (those after the message, up to the marker's
// sequence) that the marker's step read.
func composeAgent(out []model.InputMessage, m *synccore.Message, later []synccore.Message) []model.InputMessage {
	parts := m.Parts
	for start := 0; start < len(parts); {
		if n := readSequence(&parts[start]); n > 0 {
			for len(later) > 0 && later[0].Sequence <= n {
				if later[0].Role == synccore.RoleUser && sameTurn(m, &later[0]) {
					out = appendUser(out, &later[0])
				}
				later = later[1:]
			}
		}
		end := start + 1
		for end < len(parts) && parts[end].StepID == parts[start].StepID && readSequence(&parts[end]) == 0 {
			end++
		}
		out = composeStep(out, parts[start:end])
		start = end
	}
	return out
}

func composeStep(out []model.InputMessage, parts []synccore.Part) []model.InputMessage {
	var content []model.InputContent
	var results []model.InputContent
	for _, p := range parts {
		switch p.Type {
		case synccore.PartText:
			if p.Text != "" {
				content = append(content, model.InputContent{Type: model.ContentText, Text: p.Text})
			}
		case synccore.PartReasoning:
			if p.Text != "" {
				content = append(content, model.InputContent{Type: model.ContentReasoning, Text: p.Text})
			}
		case synccore.PartFile:
			content = append(content, fileContent(p))
		case synccore.PartTool:
			content = append(content, model.InputContent{
				Type: model.ContentToolCall, ToolCallID: p.ToolCallID, ToolName: p.ToolName, Input: p.Input,
			})
			if r, ok := toolResult(p); ok {
				results = append(results, r)
			}
		}
	}
	if len(content) > 0 {
		out = append(out, model.InputMessage{Role: model.RoleAssistant, Content: content})
	}
	for _, r := range results {
		out = append(out, model.InputMessage{Role: model.RoleTool, Content: []model.InputContent{r}})
	}
	return out
}

// toolResult is the result entry of a finished tool; a tool that has not
// finished has none.
func toolResult(p synccore.Part) (model.InputContent, bool) {
	switch p.State {
	case synccore.ToolOutputAvailable, synccore.ToolOutputError, synccore.ToolOutputDenied:
	default:
		return model.InputContent{}, false
	}
	return model.InputContent{
		Type:       model.ContentToolResult,
		ToolCallID: p.ToolCallID,
		ToolName:   p.ToolName,
		Output:     p.Output,
		ToolState:  string(p.State),
		IsError:    p.State != synccore.ToolOutputAvailable,
	}, true
}
