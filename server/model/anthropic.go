package model

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Anthropic streams steps from the Messages API: text, extended thinking
// (as reasoning parts), tool use with its input JSON streamed, and usage.
type Anthropic struct {
	Model     string // Anthropic's model name, e.g. "claude-sonnet-4-5"
	Budget    int    // context budget, estimated tokens
	MaxTokens int64  // per step; default 8192
	// Thinking is the extended-thinking budget in tokens; 0 = off.
	Thinking int64
	client   anthropic.Client
	sigs     signatures
}

// NewAnthropic is a provider for model at baseURL ("" = Anthropic's) with
// key; the SDK's own retries are off (Retrying does them).
func NewAnthropic(model, baseURL, key string, hc *http.Client) *Anthropic {
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(0)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	if hc != nil {
		opts = append(opts, option.WithHTTPClient(hc))
	}
	return &Anthropic{Model: model, MaxTokens: 8192, client: anthropic.NewClient(opts...)}
}

// Stream implements Provider with the Messages API, streamed.
func (p *Anthropic) Stream(ctx context.Context, req Request, emit func(Event) error) error {
	params := anthropic.MessageNewParams{
		Model:     p.Model,
		MaxTokens: p.MaxTokens,
	}
	params.System, params.Messages = p.messages(req.Messages)
	if p.Thinking > 0 {
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(p.Thinking)
		if params.MaxTokens <= p.Thinking {
			params.MaxTokens = p.Thinking + 4096
		}
	}
	for _, t := range req.Tools {
		schema := schemaOf(t)
		tool := anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: schemaExtras(schema)},
		}
		if req, ok := schema["required"].([]string); ok {
			tool.InputSchema.Required = req
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	st := &anthropicStream{p: p, a: newAdapter(emit)}
	var emitErr error
	for emitErr == nil && stream.Next() {
		ev := stream.Current()
		emitErr = st.event(&ev)
	}
	if emitErr != nil {
		return emitErr
	}
	if err := stream.Err(); err != nil {
		return anthropicError(ctx, err)
	}
	if !st.stopped {
		st.a.finish = "" // message_stop is the finish event
	}
	if err := st.a.end(); err != nil {
		if errors.Is(err, ErrNoFinish) {
			return classify("anthropic", 0, err)
		}
		return err
	}
	return nil
}

// anthropicStream is the state of one Messages stream.
type anthropicStream struct {
	p                   *Anthropic
	a                   *adapter
	thinking, signature []byte // the thinking block being streamed
	stopped             bool   // message_stop came
}

// event maps one stream event.
func (st *anthropicStream) event(ev *anthropic.MessageStreamEventUnion) error {
	a := st.a
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		a.usage = map[string]any{"model": ev.Message.Model, "input_tokens": u.InputTokens,
			"cache_read_tokens": u.CacheReadInputTokens, "cache_creation_tokens": u.CacheCreationInputTokens}
	case "content_block_start":
		if cb := &ev.ContentBlock; cb.Type == "tool_use" {
			return a.toolStart(ev.Index, cb.ID, cb.Name)
		}
	case "content_block_delta":
		switch d := &ev.Delta; d.Type {
		case "text_delta":
			return a.delta(EvTextStart, d.Text)
		case "thinking_delta":
			st.thinking = append(st.thinking, d.Thinking...)
			return a.delta(EvReasoningStart, d.Thinking)
		case "signature_delta":
			st.signature = append(st.signature, d.Signature...)
		case "input_json_delta":
			return a.toolArgs(ev.Index, d.PartialJSON)
		}
	case "content_block_stop":
		if len(st.signature) > 0 {
			st.p.sigs.put(string(st.thinking), string(st.signature))
		}
		st.thinking, st.signature = st.thinking[:0], st.signature[:0]
	case "message_delta":
		if a.usage != nil {
			a.usage["output_tokens"] = ev.Usage.OutputTokens
		}
		if ev.Delta.StopReason != "" {
			a.finish = string(ev.Delta.StopReason)
		}
	case "message_stop":
		st.stopped = true
	}
	return nil
}

func anthropicError(ctx context.Context, err error) error {
	if canceled(ctx, err) {
		return context.Cause(ctx)
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		if status < 300 {
			// An error event inside a 200 stream (overloaded, say): a
			// stream failure, worth a retry if nothing streamed yet.
			status = 0
		}
		e := classify("anthropic", status, err)
		if status == 0 {
			e.Retryable = true
		}
		return e
	}
	return classify("anthropic", 0, err)
}

// messages maps the composed input: system entries become the system
// prompt, tool results user blocks. Reasoning goes back as a thinking
// block only with the signature this process saw for it (Anthropic
// refuses thinking without one); otherwise it is left out.
func (p *Anthropic) messages(in []InputMessage) ([]anthropic.TextBlockParam, []anthropic.MessageParam) {
	var system []anthropic.TextBlockParam
	var out []anthropic.MessageParam
	// Consecutive entries of one role merge: the API alternates user and
	// assistant, and tool results are user blocks.
	var role string
	var pending []anthropic.ContentBlockParamUnion
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if role == RoleAssistant {
			out = append(out, anthropic.NewAssistantMessage(pending...))
		} else {
			out = append(out, anthropic.NewUserMessage(pending...))
		}
		pending = nil
	}
	push := func(r string, blocks []anthropic.ContentBlockParamUnion) {
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
		var blocks []anthropic.ContentBlockParamUnion
		for _, c := range m.Content {
			switch {
			case m.Role == RoleSystem:
				system = append(system, anthropic.TextBlockParam{Text: c.Text})
			case c.Type == ContentText && c.Text != "":
				blocks = append(blocks, anthropic.NewTextBlock(c.Text))
			case c.Type == ContentReasoning:
				if sig, ok := p.sigs.get(c.Text); ok {
					blocks = append(blocks, anthropic.NewThinkingBlock(sig, c.Text))
				}
			case c.Type == ContentFile && isImage(c.MediaType):
				blocks = append(blocks, anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: c.URL}))
			case c.Type == ContentFile:
				blocks = append(blocks, anthropic.NewTextBlock(fileLine(c)))
			case c.Type == ContentToolCall:
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ToolCallID, inputObject(c.Input), c.ToolName))
			case c.Type == ContentToolResult:
				blocks = append(blocks, anthropic.NewToolResultBlock(c.ToolCallID, jsonText(c.Output), c.IsError))
			}
		}
		if m.Role == RoleAssistant {
			push(RoleAssistant, blocks)
		} else {
			push(RoleUser, blocks)
		}
	}
	flush()
	return system, out
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
