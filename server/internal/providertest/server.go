// Package providertest serves recorded provider responses from a real HTTP
// server on loopback, so the OpenAI and Anthropic providers are tested
// against their own wire format (server-sent events as the providers
// document them) without a network or a key.
package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"
)

// Reply is one scripted answer to one request.
type Reply struct {
	Status  int    // HTTP status; 0 = 200
	Fixture string // file whose bytes are the body (SSE events for a 200)
	Body    []byte // the body, when there is no Fixture
	// CutAfter > 0 cuts the connection after that many events, without
	// ending the response: what a dropped connection looks like.
	CutAfter int
	// Delay is the pause before each event; the request's cancellation
	// ends it at once (and is recorded).
	Delay time.Duration
}

// Request is what the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any // the JSON body, decoded
	Raw    []byte         // the body as it came, byte for byte
}

// Server answers each request with the next queued Reply; with none left
// it answers 500.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
	// Canceled receives one value each time a client went away while a
	// delayed reply was streaming.
	Canceled chan struct{}
}

// New starts a server; Close it when done.
func New() *Server {
	s := &Server{Canceled: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Queue adds replies, answered in order.
func (s *Server) Queue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// Requests are the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var decoded map[string]any
	_ = json.Unmarshal(body, &decoded)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: decoded, Raw: body})
	if len(s.replies) == 0 {
		s.mu.Unlock()
		http.Error(w, `{"error":{"message":"providertest: no reply queued"}}`, http.StatusInternalServerError)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()

	data := rep.Body
	if rep.Fixture != "" {
		var err error
		if data, err = os.ReadFile(rep.Fixture); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		if rep.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(rep.Status)
		_, _ = w.Write(data)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	for i, ev := range Events(data) {
		if rep.CutAfter > 0 && i == rep.CutAfter {
			panic(http.ErrAbortHandler) // drops the connection mid-response
		}
		if rep.Delay > 0 {
			select {
			case <-time.After(rep.Delay):
			case <-r.Context().Done():
				s.Canceled <- struct{}{}
				return
			}
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		flusher.Flush()
	}
}

// Events splits an SSE body into its events, each with its blank line.
func Events(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.Index(data, []byte("\n\n"))
		if i < 0 {
			out = append(out, data)
			break
		}
		out = append(out, data[:i+2])
		data = data[i+2:]
	}
	return out
}

// Memory is an http.RoundTripper answering every request with body as an
// event stream, read from memory: benchmarks measure parsing, not sockets.
type Memory struct{ Body []byte }

func (m Memory) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(m.Body)),
		Request:    r,
	}, nil
}

// Generated streams, for benchmarks.

// OpenAIText is a Chat Completions stream of n one-word content deltas.
func OpenAIText(n int) []byte {
	var b strings.Builder
	const head = `data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4o-mini","system_fingerprint":"fp_b","choices":[{"index":0,"delta":{"content":"`
	for i := range n {
		fmt.Fprintf(&b, "%stok%d \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head, i%10)
	}
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":` + fmt.Sprint(n) + `,"total_tokens":` + fmt.Sprint(n+9) + "}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// AnthropicText is a Messages stream of n one-word text deltas.
func AnthropicText(n int) []byte {
	var b strings.Builder
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_B","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := range n {
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok%d "}}`, i%10))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, n))
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}
