package model

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI streams steps from the Chat Completions API of OpenAI or of any
// server that speaks it (Ollama, vLLM, llama.cpp's server, OpenRouter, LM
// Studio): text deltas, the reasoning_content / reasoning deltas such
// servers add, tool calls and usage.
type OpenAI struct {
	Model  string // the provider's model id, e.g. "gpt-4o-mini"
	Budget int    // context budget, estimated tokens
	client openai.Client
}

// NewOpenAI is a provider for model at baseURL ("" = OpenAI's) with key.
// The SDK's own retries are off: Retrying does them, bounded and only
// before the first event.
func NewOpenAI(model, baseURL, key string, hc *http.Client) *OpenAI {
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(0)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return &OpenAI{Model: model, client: openai.NewClient(opts...)}
}

// Stream implements Provider with the Chat Completions API, streamed.
func (p *OpenAI) Stream(ctx context.Context, req Request, emit func(Event) error) error {
	params := openai.ChatCompletionNewParams{
		Model:         p.Model,
		Messages:      openAIMessages(req.Messages),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(schemaOf(t)),
		}))
	}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()

	a := newAdapter(emit)
	var emitErr error
	for emitErr == nil && stream.Next() {
		c := stream.Current()
		emitErr = a.openAIChunk(&c)
	}
	if emitErr != nil {
		return emitErr // the engine stopped the step
	}
	if err := stream.Err(); err != nil {
		return openAIError(ctx, err)
	}
	if err := a.end(); err != nil {
		if errors.Is(err, ErrNoFinish) {
			return classify("openai", 0, err)
		}
		return err
	}
	return nil
}

// openAIChunk maps one chunk. Only choice 0 is read (n is never set).
func (a *adapter) openAIChunk(c *openai.ChatCompletionChunk) error {
	if c.JSON.Usage.Valid() && c.Usage.TotalTokens+c.Usage.PromptTokens > 0 {
		a.usage = map[string]any{
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
			if err := a.delta(EvReasoningStart, r); err != nil {
				return err
			}
		}
		if err := a.delta(EvTextStart, d.Content); err != nil {
			return err
		}
		for _, tc := range d.ToolCalls {
			if tc.ID != "" || tc.Function.Name != "" {
				if err := a.toolStart(tc.Index, tc.ID, tc.Function.Name); err != nil {
					return err
				}
			}
			if err := a.toolArgs(tc.Index, tc.Function.Arguments); err != nil {
				return err
			}
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	return nil
}

// reasoningDelta reads the reasoning text OpenAI-compatible servers put
// beside content: "reasoning_content" (DeepSeek, vLLM, llama.cpp) or
// "reasoning" (Ollama, OpenRouter).
func reasoningDelta(d *openai.ChatCompletionChunkChoiceDelta) string {
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

func openAIError(ctx context.Context, err error) error {
	if canceled(ctx, err) {
		return context.Cause(ctx)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return classify("openai", apiErr.StatusCode, err)
	}
	return classify("openai", 0, err)
}

// openAIMessages maps the composed input to chat messages. Reasoning is
// not sent back (the API takes none); a file is an image part when it is
// an image, else a line naming it.
func openAIMessages(in []InputMessage) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(in))
	for _, m := range in {
		switch m.Role {
		case RoleSystem:
			out = append(out, openai.SystemMessage(joinText(m.Content)))
		case RoleUser:
			var parts []openai.ChatCompletionContentPartUnionParam
			for _, c := range m.Content {
				switch {
				case c.Type == ContentFile && isImage(c.MediaType):
					parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: c.URL}))
				case c.Type == ContentFile:
					parts = append(parts, openai.TextContentPart(fileLine(c)))
				case c.Type == ContentText:
					parts = append(parts, openai.TextContentPart(c.Text))
				}
			}
			out = append(out, openai.UserMessage(parts))
		case RoleAssistant:
			msg := openai.ChatCompletionAssistantMessageParam{}
			if text := joinText(m.Content); text != "" {
				msg.Content.OfString = openai.String(text)
			}
			for _, c := range m.Content {
				if c.Type != ContentToolCall {
					continue
				}
				msg.ToolCalls = append(msg.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ToolCallID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.ToolName, Arguments: jsonText(c.Input)},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &msg})
		case RoleTool:
			for _, c := range m.Content {
				out = append(out, openai.ToolMessage(jsonText(c.Output), c.ToolCallID))
			}
		}
	}
	return out
}
