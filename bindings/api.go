package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

const contentMsgpack = "application/msgpack"

// maxResponseBytes bounds what the API helper reads from one answer: a page
// of 200 messages with long outputs is large, but never unbounded.
const maxResponseBytes = 256 << 20

// API is a thin client of the server's HTTP API (docs/protocol.md §3), in
// msgpack. Its zero value needs BaseURL. It is safe for concurrent use.
// Every error from the server is a *synccore.Error with the server's code.
type API struct {
	// BaseURL is the server's root, e.g. "http://127.0.0.1:8080".
	BaseURL string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// TokenSource, when set, gives the token instead of Token, and a new
	// one after the server refused the current one (see TokenSource).
	TokenSource TokenSource
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client

	toks tokens // the TokenSource's current token
}

// Messages reads one page of a session's history from the server's
// snapshot: the newest limit messages with sequence < beforeSequence (0:
// up to the head), oldest first. A limit of 0 is the server's default.
func (a *API) Messages(ctx context.Context, sessionID string, limit int, beforeSequence int64, includeInternal bool) (synccore.MessagePage, error) {
	raw, err := a.pageBytes(ctx, sessionID, limit, beforeSequence, includeInternal)
	if err != nil {
		return synccore.MessagePage{}, err
	}
	return wire.DecodePage(raw) // the same decoder the core uses; a typed malformed error

}

// pageBytes is Messages without decoding: the core takes the page's bytes
// exactly as the server sent them.
func (a *API) pageBytes(ctx context.Context, sessionID string, limit int, beforeSequence int64, includeInternal bool) ([]byte, error) {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if beforeSequence != 0 {
		q.Set("before_sequence", strconv.FormatInt(beforeSequence, 10))
	}
	if includeInternal {
		q.Set("include_internal", "true")
	}
	var raw rawBody
	err := a.do(ctx, http.MethodGet, sessionPath(sessionID, "messages"), q, nil, &raw)
	return raw, err
}

// Send posts a visible user message made of parts and returns it as stored.
func (a *API) Send(ctx context.Context, sessionID string, parts ...synccore.Part) (synccore.Message, error) {
	return a.SendMessage(ctx, sessionID, parts, synccore.VisibilityVisible)
}

// SendMessage posts a user message with the given visibility.
func (a *API) SendMessage(ctx context.Context, sessionID string, parts []synccore.Part, visibility synccore.Visibility) (synccore.Message, error) {
	return a.SendWith(ctx, sessionID, parts, SendOptions{Visibility: visibility})
}

// SendOptions are a post's optional settings (SendWith).
type SendOptions struct {
	// Visibility of the message; empty is visible.
	Visibility synccore.Visibility
	// IdempotencyKey names the post across its retries (at most 255 bytes,
	// docs/protocol.md §3): the server commits it once and answers every
	// retry with the message it committed. Empty: a new random key per
	// call. Pass your own to retry a post across process restarts.
	IdempotencyKey string
	// Retries is how many times a post that may not have arrived is sent
	// again (send.go); 0 means DefaultSendRetries, a negative value none.
	Retries int
	// Delivery of a message sent while a turn runs: DeliverySteer (empty,
	// the default: the running turn reads it), DeliveryQueue (the next
	// turn answers it) or DeliveryInterrupt (the running turn stops, a new
	// one answers it). See docs/protocol.md §2.
	Delivery Delivery
}

// SendWith posts a user message, safe to retry: every attempt carries the
// same Idempotency-Key, and a post whose answer was lost (a network
// failure), refused for the rate (429) or by a draining server (503) is
// sent again after the server's Retry-After or a backoff (send.go).
func (a *API) SendWith(ctx context.Context, sessionID string, parts []synccore.Part, opts SendOptions) (synccore.Message, error) {
	body := httpwire.PostMessageRequest{Parts: parts, Visibility: opts.Visibility, Delivery: opts.Delivery}
	key := opts.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	}
	var m synccore.Message
	err := retried(ctx, opts.Retries, func(retryAfter *time.Duration) error {
		return a.doWith(ctx, http.MethodPost, sessionPath(sessionID, "messages"), nil, body, &m, http.Header{"Idempotency-Key": {key}}, retryAfter)
	})
	return m, err
}

// Answer answers a pending interaction: Approval(bool) for an approval,
// Reply(string) for a question. It returns the agent message holding the
// interaction. A refusal to retry (429, or 503 closed: a node that lost the
// session, or another node that did not answer in time) is sent again after
// its Retry-After (send.go).
func (a *API) Answer(ctx context.Context, sessionID, interactionID string, response InteractionResponse) (synccore.Message, error) {
	var m synccore.Message
	err := retriedRefusals(ctx, func(retryAfter *time.Duration) error {
		return a.doWith(ctx, http.MethodPost, sessionPath(sessionID, "interactions", interactionID), nil, httpwire.AnswerRequest{Response: response}, &m, nil, retryAfter)
	})
	return m, err
}

// Approval is the response to an approval interaction.
func Approval(approved bool) InteractionResponse { return httpwire.Approve(approved) }

// Reply is the response to a question interaction.
func Reply(answer string) InteractionResponse { return httpwire.Reply(answer) }

// Action runs a session operation (ActionStop; ActionSetModel with a model
// name of Session.Models; ActionSetApprovalMode with httpwire.ApprovalAsk
// or ApprovalAuto; ActionRetry after a turn ended with a recoverable error)
// and returns the message holding the action part. Refusals to retry are
// sent again, as Answer's are.
func (a *API) Action(ctx context.Context, sessionID string, actionType ActionType, value string) (synccore.Message, error) {
	var m synccore.Message
	err := retriedRefusals(ctx, func(retryAfter *time.Duration) error {
		return a.doWith(ctx, http.MethodPost, sessionPath(sessionID, "actions"), nil, httpwire.ActionRequest{ActionType: actionType, Value: value}, &m, nil, retryAfter)
	})
	return m, err
}

// sessionPath builds /v1/sessions/{id}/rest... with escaped segments.
func sessionPath(sessionID string, rest ...string) string {
	var b strings.Builder
	b.WriteString("/v1/sessions/")
	b.WriteString(url.PathEscape(sessionID))
	for _, r := range rest {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(r))
	}
	return b.String()
}

// rawBody asks do for the answer's bytes undecoded.
type rawBody []byte

// do sends one request with a msgpack body (if in is not nil) and decodes a
// 2xx msgpack answer into out. A non-2xx answer becomes the server's typed
// error.
func (a *API) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	return a.doWith(ctx, method, path, q, in, out, nil, nil)
}

// doWith is do with extra request headers; retryAfter, if not nil, gets a
// non-2xx answer's Retry-After (0 without one). A request the server
// refuses with 401 or 403 is sent once more if the TokenSource gives a new
// token. A request that got no answer is a *NetworkError.
func (a *API) doWith(ctx context.Context, method, path string, q url.Values, in, out any, header http.Header, retryAfter *time.Duration) error {
	u := strings.TrimRight(a.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body []byte
	if in != nil {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseCompactInts(true)
		if err := enc.Encode(in); err != nil {
			return fmt.Errorf("bindings: encode %s %s: %w", method, path, err)
		}
		body = buf.Bytes()
	}
	for attempt := 0; ; attempt++ {
		tok, err := a.token(ctx)
		if err != nil {
			return synccore.Errorf(synccore.CodeUnauthorized, "%s %s: %v", method, path, err)
		}
		err = a.once(ctx, method, path, u, body, in != nil, tok, out, header, retryAfter)
		if attempt == 0 && refusedToken(err) && a.refresh(ctx, tok) {
			continue
		}
		return err
	}
}

// refusedToken reports whether err is the server refusing the token.
func refusedToken(err error) bool {
	return errors.Is(err, synccore.ErrUnauthorized) || errors.Is(err, synccore.ErrForbidden)
}

// once sends one request of doWith.
func (a *API) once(ctx context.Context, method, path, u string, body []byte, hasBody bool, tok string, out any, header http.Header, retryAfter *time.Duration) error {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("bindings: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", contentMsgpack)
	if hasBody {
		req.Header.Set("Content-Type", contentMsgpack)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	hc := a.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("bindings: %s %s: %w", method, path, ctx.Err())
		}
		return &NetworkError{fmt.Errorf("%s %s: %w", method, path, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("bindings: read answer of %s %s: %w", method, path, ctx.Err())
		}
		return &NetworkError{fmt.Errorf("read answer of %s %s: %w", method, path, err)}
	}
	if len(data) > maxResponseBytes {
		return synccore.Errorf(synccore.CodeTooLarge, "%s %s: answer over %d bytes", method, path, maxResponseBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if retryAfter != nil {
			*retryAfter = parseRetryAfter(resp.Header)
		}
		return serverError(resp, data)
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *rawBody:
		*o = data
		return nil
	}
	if err := msgpack.Unmarshal(data, out); err != nil {
		return synccore.Errorf(synccore.CodeMalformed, "%s %s: decode answer: %v", method, path, err)
	}
	return nil
}

// serverError decodes the server's {code, message} (msgpack as asked, or
// JSON from a path that could not honour Accept), or types the bare status.
func serverError(resp *http.Response, data []byte) error {
	var e synccore.Error
	ct := resp.Header.Get("Content-Type")
	var err error
	if strings.HasPrefix(ct, contentMsgpack) {
		err = msgpack.Unmarshal(data, &e)
	} else {
		err = json.Unmarshal(data, &e)
	}
	if err == nil && e.Code != "" {
		return &e
	}
	return synccore.Errorf(wire.CodeForHTTPStatus(resp.StatusCode), "HTTP %s: %s", resp.Status, bytes.TrimSpace(data))
}
