// Package openai is the model provider of the Chat Completions API of
// OpenAI and of any server that speaks it (Ollama, vLLM, llama.cpp's
// server, OpenRouter, LM Studio). An app that uses it imports it; the
// server package does not.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/internal/stream"
)

// Provider streams steps from the Chat Completions API of OpenAI or of any
// server that speaks it (Ollama, vLLM, llama.cpp's server, OpenRouter, LM
// Studio): text deltas, the reasoning_content / reasoning deltas such
// servers add, tool calls and usage.
type Provider struct {
	Model  string // the provider's model id, e.g. "gpt-4o-mini"
	Budget int    // context budget, estimated tokens
	client oai.Client
}

// New is a provider for model at baseURL ("" = OpenAI's) with key.
// The SDK's own retries are off: model.Retrying does them, bounded and only
// before the first event.
func New(model, baseURL, key string, hc *http.Client) *Provider {
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(0)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return &Provider{Model: model, Budget: DefaultBudget, client: oai.NewClient(opts...)}
}

// Stream implements model.Provider with the Chat Completions API, streamed.
func (p *Provider) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	params := oai.ChatCompletionNewParams{
		Model:         p.Model,
		Messages:      messages(req.Messages),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: oai.String(t.Description),
			Parameters:  shared.FunctionParameters(stream.SchemaOf(t)),
		}))
	}
	st := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer st.Close()

	a := stream.NewAdapter(emit)
	var emitErr error
	for emitErr == nil && st.Next() {
		c := st.Current()
		emitErr = chunk(a, &c)
	}
	if emitErr != nil {
		return emitErr // the engine stopped the step
	}
	if err := st.Err(); err != nil {
		return apiError(ctx, err)
	}
	if err := a.End(); err != nil {
		if errors.Is(err, model.ErrNoFinish) {
			return stream.Classify("openai", 0, err)
		}
		return err
	}
	return nil
}

// chunk maps one chunk to a. Only choice 0 is read (n is never set).
func chunk(a *stream.Adapter, c *oai.ChatCompletionChunk) error {
	if c.JSON.Usage.Valid() && c.Usage.TotalTokens+c.Usage.PromptTokens > 0 {
		a.Usage = map[string]any{
			"model":            c.Model,
			"input_tokens":     c.Usage.PromptTokens,
			"output_tokens":    c.Usage.CompletionTokens,
			"reasoning_tokens": c.Usage.CompletionTokensDetails.ReasoningTokens,
			"cached_tokens":    c.Usage.PromptTokensDetails.CachedTokens,
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		d := &ch.Delta
		if r := reasoningDelta(d); r != "" {
			if err := a.Delta(model.EvReasoningStart, r); err != nil {
				return err
			}
		}
		if err := a.Delta(model.EvTextStart, d.Content); err != nil {
			return err
		}
		for _, tc := range d.ToolCalls {
			if tc.ID != "" || tc.Function.Name != "" {
				if err := a.ToolStart(tc.Index, tc.ID, tc.Function.Name); err != nil {
					return err
				}
			}
			if err := a.ToolArgs(tc.Index, tc.Function.Arguments); err != nil {
				return err
			}
		}
		if ch.FinishReason != "" {
			a.Finish = ch.FinishReason
		}
	}
	return nil
}

// reasoningDelta reads the reasoning text OpenAI-compatible servers put
// beside content: "reasoning_content" (DeepSeek, vLLM, llama.cpp) or
// "reasoning" (Ollama, OpenRouter).
func reasoningDelta(d *oai.ChatCompletionChunkChoiceDelta) string {
	for _, key := range [...]string{"reasoning_content", "reasoning"} {
		// Unknown fields are kept raw (and marked invalid, having no Go
		// field to decode into): read the raw JSON string.
		raw := d.JSON.ExtraFields[key].Raw()
		if len(raw) < 2 || raw[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func apiError(ctx context.Context, err error) error {
	if stream.Canceled(ctx, err) {
		return context.Cause(ctx)
	}
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		return stream.Classify("openai", apiErr.StatusCode, err)
	}
	return stream.Classify("openai", 0, err)
}

// filePart is a user file in Chat Completions' documented input shape:
// an image is an image_url part (a data: URL of the bytes the composer
// read, or the file's own http(s) or data: URL), a PDF with its bytes a
// file part {"type":"file","file":{"filename","file_data":"data:application/pdf;base64,..."}};
// any other file, or one whose URL only this server serves, is a line
// naming it.
func filePart(c model.InputContent) oai.ChatCompletionContentPartUnionParam {
	switch {
	case stream.IsImage(c.MediaType) && len(c.Data) > 0:
		return oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: stream.DataURL(c.MediaType, c.Data)})
	case stream.IsImage(c.MediaType) && stream.Fetchable(c.URL):
		return oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: c.URL})
	case stream.IsPDF(c.MediaType) && len(c.Data) > 0:
		name := c.Filename
		if name == "" {
			name = "file.pdf"
		}
		return oai.FileContentPart(oai.ChatCompletionContentPartFileFileParam{
			Filename: oai.String(name),
			FileData: oai.String(stream.DataURL("application/pdf", c.Data)),
		})
	}
	return oai.TextContentPart(stream.FileLine(c))
}

// messages maps the composed input to chat messages. Reasoning is not
// sent back (the API takes none); files are filePart's.
func messages(in []model.InputMessage) []oai.ChatCompletionMessageParamUnion {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, len(in))
	for _, m := range in {
		switch m.Role {
		case model.RoleSystem:
			out = append(out, oai.SystemMessage(stream.JoinText(m.Content)))
		case model.RoleUser:
			var parts []oai.ChatCompletionContentPartUnionParam
			for _, c := range m.Content {
				switch c.Type {
				case model.ContentFile:
					parts = append(parts, filePart(c))
				case model.ContentText:
					parts = append(parts, oai.TextContentPart(c.Text))
				}
			}
			out = append(out, oai.UserMessage(parts))
		case model.RoleAssistant:
			msg := oai.ChatCompletionAssistantMessageParam{}
			if text := stream.JoinText(m.Content); text != "" {
				msg.Content.OfString = oai.String(text)
			}
			for _, c := range m.Content {
				if c.Type != model.ContentToolCall {
					continue
				}
				msg.ToolCalls = append(msg.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ToolCallID,
						Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.ToolName, Arguments: stream.JSONText(c.Input)},
					},
				})
			}
			out = append(out, oai.ChatCompletionMessageParamUnion{OfAssistant: &msg})
		case model.RoleTool:
			for _, c := range m.Content {
				out = append(out, oai.ToolMessage(stream.JSONText(c.Output), c.ToolCallID))
			}
		}
	}
	return out
}

// DefaultBudget is the context budget New gives a provider, in estimated
// tokens: what the composer fits in a step's input before older turns give
// way to a summary.
const DefaultBudget = 100_000

// ContextBudget implements model.Budgeter.
func (p *Provider) ContextBudget() int { return p.Budget }
