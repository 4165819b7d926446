package composer

import (
	"encoding/json"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// BytesPerToken is the estimate the composer budgets with: about four
// bytes of English text per token, across the common tokenizers. A budget
// is a bound on the context, not a bill, so an estimate is enough.
const BytesPerToken = 4

// Tokens estimates what a message costs in a model's context: the parts
// that Compose sends (text, context, tool input and output), plus a small
// overhead per message and part.
func Tokens(m *synccore.Message) int {
	n := 8
	for i := range m.Parts {
		p := &m.Parts[i]
		n += 4
		switch p.Type {
		case synccore.PartText, synccore.PartReasoning:
			n += len(p.Text) / BytesPerToken
		case synccore.PartContext:
			n += (len(p.Context) + len(p.Tag)) / BytesPerToken
		case synccore.PartFile:
			n += len(p.URL)/BytesPerToken + 16
		case synccore.PartTool:
			n += (jsonLen(p.Input) + jsonLen(p.Output)) / BytesPerToken
		}
	}
	return n
}

func jsonLen(v any) int {
	if v == nil {
		return 0
	}
	if s, ok := v.(string); ok {
		return len(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// SummaryPrefix opens the system entry that carries a summary.
const SummaryPrefix = "Summary of the earlier conversation (older turns are not shown):\n"

// WithSummary puts the summary of older turns before the composed recent
// messages, as a system entry; an empty summary adds nothing.
func WithSummary(summary string, in []model.InputMessage) []model.InputMessage {
	if summary == "" {
		return in
	}
	out := make([]model.InputMessage, 0, len(in)+1)
	out = append(out, model.InputMessage{Role: model.RoleSystem, Content: []model.InputContent{
		{Type: model.ContentText, Text: SummaryPrefix + summary},
	}})
	return append(out, in...)
}

// Instructions of a summary request.
const (
	summaryPrevious = "Earlier summary: "
	summaryAsk      = "Summarise the conversation above for your own later use: the user's goals, facts and decisions, " +
		"tool results that matter, and open questions. Be brief; write only the summary."
)

// SummaryRequest is the model input asking for a summary of older
// messages, given the previous summary (which they continue).
func SummaryRequest(previous string, older []synccore.Message) []model.InputMessage {
	var out []model.InputMessage
	if previous != "" {
		out = append(out, model.InputMessage{Role: model.RoleUser, Content: []model.InputContent{
			{Type: model.ContentText, Text: summaryPrevious + previous}}})
	}
	out = append(out, Compose(older)...)
	return append(out, model.InputMessage{Role: model.RoleUser, Content: []model.InputContent{
		{Type: model.ContentText, Text: summaryAsk}}})
}
