// Package anthropic is the model provider of Anthropic's Messages API. An
// app that uses it imports it; the server package does not.
package anthropic

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/internal/stream"
)

// Provider streams steps from the Messages API: text, extended thinking
// (as reasoning parts), tool use with its input JSON streamed, and usage.
type Provider struct {
	Model     string // Anthropic's model name, e.g. "claude-sonnet-4-5"
	Budget    int    // context budget, estimated tokens
	MaxTokens int64  // per step; default 8192
	// Thinking is the extended-thinking budget in tokens; 0 = off.
	Thinking int64
	client   sdk.Client
	sigs     signatures
}

// New is a provider for model at baseURL ("" = Anthropic's) with
// key; the SDK's own retries are off (model.Retrying does them).
func New(model, baseURL, key string, hc *http.Client) *Provider {
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(0)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return &Provider{Model: model, Budget: DefaultBudget, MaxTokens: 8192, client: sdk.NewClient(opts...)}
}

// Stream implements model.Provider with the Messages API, streamed.
func (p *Provider) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	params := sdk.MessageNewParams{
		Model:     p.Model,
		MaxTokens: p.MaxTokens,
	}
	params.System, params.Messages = p.messages(req.Messages)
	if p.Thinking > 0 {
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(p.Thinking)
		if params.MaxTokens <= p.Thinking {
			params.MaxTokens = p.Thinking + 4096
		}
	}
	for _, t := range req.Tools {
		schema := stream.SchemaOf(t)
		tool := sdk.ToolParam{
			Name:        t.Name,
			Description: sdk.String(t.Description),
			InputSchema: sdk.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: schemaExtras(schema)},
		}
		if req, ok := schema["required"].([]string); ok {
			tool.InputSchema.Required = req
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	events := p.client.Messages.NewStreaming(ctx, params)
	defer events.Close()

	st := &stepStream{p: p, a: stream.NewAdapter(emit)}
	var emitErr error
	for emitErr == nil && events.Next() {
		ev := events.Current()
		emitErr = st.event(&ev)
	}
	if emitErr != nil {
		return emitErr
	}
	if err := events.Err(); err != nil {
		return apiError(ctx, err)
	}
	if !st.stopped {
		st.a.Finish = "" // message_stop is the finish event
	}
	if err := st.a.End(); err != nil {
		if errors.Is(err, model.ErrNoFinish) {
			return stream.Classify("anthropic", 0, err)
		}
		return err
	}
	return nil
}

// stepStream is the state of one Messages stream.
type stepStream struct {
	p                   *Provider
	a                   *stream.Adapter
	thinking, signature []byte // the thinking block being streamed
	stopped             bool   // message_stop came
}

// event maps one stream event.
func (st *stepStream) event(ev *sdk.MessageStreamEventUnion) error {
	a := st.a
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		a.Usage = map[string]any{"model": ev.Message.Model, "input_tokens": u.InputTokens,
			"cache_read_tokens": u.CacheReadInputTokens, "cache_creation_tokens": u.CacheCreationInputTokens}
	case "content_block_start":
		if cb := &ev.ContentBlock; cb.Type == "tool_use" {
			return a.ToolStart(ev.Index, cb.ID, cb.Name)
		}
	case "content_block_delta":
		switch d := &ev.Delta; d.Type {
		case "text_delta":
			return a.Delta(model.EvTextStart, d.Text)
		case "thinking_delta":
			st.thinking = append(st.thinking, d.Thinking...)
			return a.Delta(model.EvReasoningStart, d.Thinking)
		case "signature_delta":
			st.signature = append(st.signature, d.Signature...)
		case "input_json_delta":
			return a.ToolArgs(ev.Index, d.PartialJSON)
		}
	case "content_block_stop":
		if len(st.signature) > 0 {
			st.p.sigs.put(string(st.thinking), string(st.signature))
		}
		st.thinking, st.signature = st.thinking[:0], st.signature[:0]
	case "message_delta":
		if a.Usage != nil {
			a.Usage["output_tokens"] = ev.Usage.OutputTokens
		}
		if ev.Delta.StopReason != "" {
			a.Finish = string(ev.Delta.StopReason)
		}
	case "message_stop":
		st.stopped = true
	}
	return nil
}

func apiError(ctx context.Context, err error) error {
	if stream.Canceled(ctx, err) {
		return context.Cause(ctx)
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		if status < 300 {
			// An error event inside a 200 stream (overloaded, say): a
			// stream failure, worth a retry if nothing streamed yet.
			status = 0
		}
		e := stream.Classify("anthropic", status, err)
		if status == 0 {
			e.Retryable = true
		}
		return e
	}
	return stream.Classify("anthropic", 0, err)
}

// messages maps the composed input: system entries become the system
// prompt, tool results user blocks. Reasoning goes back as a thinking
// block only with the signature this process saw for it (Anthropic
// refuses thinking without one); otherwise it is left out.
func (p *Provider) messages(in []model.InputMessage) ([]sdk.TextBlockParam, []sdk.MessageParam) {
	var system []sdk.TextBlockParam
	var out []sdk.MessageParam
	// Consecutive entries of one role merge: the API alternates user and
	// assistant, and tool results are user blocks.
	var role string
	var pending []sdk.ContentBlockParamUnion
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if role == model.RoleAssistant {
			out = append(out, sdk.NewAssistantMessage(pending...))
		} else {
			out = append(out, sdk.NewUserMessage(pending...))
		}
		pending = nil
	}
	push := func(r string, blocks []sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if r != role {
			flush()
			role = r
		}
		pending = append(pending, blocks...)
	}
	for _, m := range in {
		var blocks []sdk.ContentBlockParamUnion
		for _, c := range m.Content {
			switch {
			case m.Role == model.RoleSystem:
				system = append(system, sdk.TextBlockParam{Text: c.Text})
			case c.Type == model.ContentText && c.Text != "":
				blocks = append(blocks, sdk.NewTextBlock(c.Text))
			case c.Type == model.ContentReasoning:
				if sig, ok := p.sigs.get(c.Text); ok {
					blocks = append(blocks, sdk.NewThinkingBlock(sig, c.Text))
				}
			case c.Type == model.ContentFile && m.Role == model.RoleUser:
				blocks = append(blocks, fileBlock(c))
			case c.Type == model.ContentFile:
				// An agent's file: assistant turns take no images or
				// documents, and the model wrote its content itself.
				blocks = append(blocks, sdk.NewTextBlock(stream.FileLine(c)))
			case c.Type == model.ContentToolCall:
				blocks = append(blocks, sdk.NewToolUseBlock(c.ToolCallID, inputObject(c.Input), c.ToolName))
			case c.Type == model.ContentToolResult:
				blocks = append(blocks, sdk.NewToolResultBlock(c.ToolCallID, stream.JSONText(c.Output), c.IsError))
			}
		}
		if m.Role == model.RoleAssistant {
			push(model.RoleAssistant, blocks)
		} else {
			push(model.RoleUser, blocks)
		}
	}
	flush()
	return system, out
}

// fileBlock is a user file in the Messages API's documented input shape:
// an image with its bytes an image block with a base64 source, a PDF a
// document block with a base64 source; with only an http(s) URL, the URL
// source of either; any other file, or one whose URL only this server
// serves, a text line naming it.
func fileBlock(c model.InputContent) sdk.ContentBlockParamUnion {
	web := strings.HasPrefix(c.URL, "https://") || strings.HasPrefix(c.URL, "http://")
	switch {
	case stream.IsImage(c.MediaType) && len(c.Data) > 0:
		return sdk.NewImageBlockBase64(c.MediaType, stream.Base64(c.Data))
	case stream.IsImage(c.MediaType) && web:
		return sdk.NewImageBlock(sdk.URLImageSourceParam{URL: c.URL})
	case stream.IsPDF(c.MediaType) && len(c.Data) > 0:
		return sdk.NewDocumentBlock(sdk.Base64PDFSourceParam{Data: stream.Base64(c.Data)})
	case stream.IsPDF(c.MediaType) && web:
		return sdk.NewDocumentBlock(sdk.URLPDFSourceParam{URL: c.URL})
	}
	return sdk.NewTextBlock(stream.FileLine(c))
}

// inputObject: tool_use input must be an object; a raw unparsable input
// is wrapped.
func inputObject(v any) any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"input": v}
}

// schemaExtras are the schema's keys beside type, properties and required.
func schemaExtras(schema map[string]any) map[string]any {
	var extra map[string]any
	for k, v := range schema {
		switch k {
		case "type", "properties", "required":
			continue
		}
		if extra == nil {
			extra = map[string]any{}
		}
		extra[k] = v
	}
	return extra
}

// signatures remembers the signature of each thinking block this process
// streamed, by its text, so the next step can send the block back as
// Anthropic requires during a tool loop. Bounded: it is emptied when full.
type signatures struct {
	mu sync.Mutex
	m  map[string]string
}

const maxSignatures = 1024

func (s *signatures) put(text, sig string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxSignatures {
		s.m = map[string]string{}
	}
	s.m[text] = sig
}

func (s *signatures) get(text string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sig, ok := s.m[text]
	return sig, ok
}

// DefaultBudget is the context budget New gives a provider, in estimated
// tokens: what the composer fits in a step's input before older turns give
// way to a summary.
const DefaultBudget = 150_000

// ContextBudget implements model.Budgeter.
func (p *Provider) ContextBudget() int { return p.Budget }

// MaxImage is the largest image the provider sends, in bytes: the
// Messages API refuses an image over 5 MiB, counted base64-encoded, so
// 3.75 MiB of bytes. A larger one becomes the composer's note.
const MaxImage = 5 << 20 / 4 * 3

// MaxImageBytes implements model.ImageLimiter.
func (p *Provider) MaxImageBytes() int64 { return MaxImage }
