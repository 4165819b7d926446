package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/gorilla/websocket"
)

const (
	// pageTimeout bounds one page read; the core retries a failed one.
	pageTimeout = 30 * time.Second
	// readTimeout declares a silent connection dead: the server pings
	// every 20 s, so three missed pings is a lost connection.
	readTimeout = 60 * time.Second
	// controlTimeout bounds writing a pong or a close frame.
	controlTimeout = 5 * time.Second
)

// subscription is one WebSocket the core asked for. The loop owns it; its
// reader goroutine only reports what it reads.
type subscription struct {
	ctx    context.Context // cancelled by close: aborts a dial in progress
	cancel context.CancelFunc

	mu     sync.Mutex
	conn   *websocket.Conn
	closed bool
}

// attach installs the dialed connection, or closes it if the core already
// closed this subscription.
func (s *subscription) attach(conn *websocket.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = conn.Close()
		return false
	}
	s.conn = conn
	return true
}

// close ends the subscription politely: a close frame, then the socket.
func (s *subscription) close() {
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.conn != nil {
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
		_ = s.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(controlTimeout))
		_ = s.conn.Close()
	}
}

// openSubscription replaces the current subscription with a new one.
func (c *Client) openSubscription(sessionID string) {
	c.closeSubscription("replaced")
	if sessionID == "" {
		sessionID = c.cfg.SessionID
	}
	l := &c.loop
	l.gen++
	s := &subscription{}
	s.ctx, s.cancel = context.WithCancel(c.ctx)
	l.sub = s
	go c.readSubscription(s, l.epoch, l.gen, sessionID)
}

// closeSubscription closes the current subscription; its reader's events
// are stale from now on.
func (c *Client) closeSubscription(reason string) {
	l := &c.loop
	l.gen++
	if l.sub != nil {
		c.log.Debug("close subscription", "reason", reason)
		l.sub.close()
		l.sub = nil
	}
}

// readSubscription dials, reports subscription_opened, then every binary
// message as a frames event, and finally connection_lost.
func (c *Client) readSubscription(s *subscription, epoch, gen uint64, sessionID string) {
	report := func(ev synccore.Event) {
		c.send(loopEvent{kind: evSub, epoch: epoch, gen: gen, ev: ev})
	}
	lost := func(err, cause error) {
		c.send(loopEvent{kind: evSub, epoch: epoch, gen: gen, cause: cause,
			ev: synccore.Event{Type: synccore.EvConnectionLost, Error: err.Error()}})
	}
	conn, err := c.dial(s.ctx, sessionID)
	if err != nil {
		if s.ctx.Err() == nil {
			c.log.Warn("subscribe failed", "err", err)
		}
		lost(err, err)
		return
	}
	if !s.attach(conn) {
		return
	}
	conn.SetReadLimit(c.cfg.MaxMessageBytes)
	keepAlive(conn)
	report(synccore.Event{Type: synccore.EvSubscriptionOpened})
	for {
		typ, data, err := conn.ReadMessage()
		if err != nil {
			var cause error
			var ce *websocket.CloseError
			if !errors.As(err, &ce) && s.ctx.Err() == nil {
				cause = &NetworkError{fmt.Errorf("subscription: %w", err)}
			}
			lost(err, cause)
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(readTimeout))
		if typ == websocket.TextMessage {
			c.signal(data) // a signal (§4.6): never numbered, never the core's
			continue
		}
		if typ != websocket.BinaryMessage {
			continue
		}
		report(synccore.Event{Type: synccore.EvFrames, Data: data})
	}
}

// keepAlive gives conn the read deadline of a live connection, renewed by
// every ping of the server (and by each message its reader reads).
func keepAlive(conn *websocket.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(readTimeout))
	conn.SetPingHandler(func(data string) error {
		_ = conn.SetReadDeadline(time.Now().Add(readTimeout))
		err := conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(controlTimeout))
		if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
			return err
		}
		return nil
	})
}

// dial opens the WebSocket of sessionID's subscription (API.dialWS). A
// refusal is the server's typed error (not_found for a session that is
// gone).
func (c *Client) dial(ctx context.Context, sessionID string) (*websocket.Conn, error) {
	u, err := subscribeURL(c.cfg.BaseURL, sessionID, c.cfg.OnAlternatives != nil)
	if err != nil {
		return nil, err
	}
	return c.api.dialWS(ctx, c.cfg.Dialer, u)
}

// dialWS opens the WebSocket at u with the API's token (nil d means
// websocket.DefaultDialer). A 401 or 403 is tried once more if the
// TokenSource gives a new token; a dial that got no answer is a
// *NetworkError; a refused upgrade is the server's error.
func (a *API) dialWS(ctx context.Context, d *websocket.Dialer, u string) (*websocket.Conn, error) {
	if d == nil {
		d = websocket.DefaultDialer
	}
	for attempt := 0; ; attempt++ {
		tok, err := a.token(ctx)
		if err != nil {
			return nil, synccore.Errorf(synccore.CodeUnauthorized, "subscribe: %v", err)
		}
		header := http.Header{}
		if tok != "" {
			header.Set("Authorization", "Bearer "+tok)
		}
		conn, resp, err := d.DialContext(ctx, u, header)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("bindings: subscribe %s: %w", u, ctx.Err())
		}
		if resp == nil {
			return nil, &NetworkError{fmt.Errorf("subscribe %s: %w", u, err)}
		}
		// gorilla keeps the first KiB of a refused handshake's body.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		serr := serverError(resp, data)
		if attempt == 0 && refusedToken(serr) && a.refresh(ctx, tok) {
			continue
		}
		return nil, fmt.Errorf("bindings: subscribe %s: %w", u, serr)
	}
}

// subscribeURL turns the HTTP base URL into the subscription's ws:// URL.
func subscribeURL(base, sessionID string, signals bool) (string, error) {
	u, err := websocketBase(base)
	if err != nil {
		return "", err
	}
	// Path holds the decoded form, RawPath the escaped one: an id with a
	// "/" or "%" stays one segment.
	u.RawPath = u.EscapedPath() + sessionPath(sessionID, "subscribe")
	u.Path += "/v1/sessions/" + sessionID + "/subscribe"
	// kept=1: the core takes texts without the beginning it was sent
	// (docs/protocol.md §4.5).
	q := u.Query()
	q.Set("kept", "1")
	if signals {
		q.Set("signals", "1") // text messages beside the frames (§4.6)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// websocketBase is the server's base URL with its ws:// or wss:// scheme.
func websocketBase(base string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil {
		return nil, fmt.Errorf("bindings: base URL %q: %w", base, err)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return nil, fmt.Errorf("bindings: base URL %q: scheme must be http or https", base)
	}
	return u, nil
}

// signal hands a signal of the subscription to the callback it is for;
// one this client does not know, or cannot read, is ignored (a newer
// server may send more).
func (c *Client) signal(data []byte) {
	var s struct {
		Signal string `json:"signal"`
		httpwire.BranchCount
	}
	if err := json.Unmarshal(data, &s); err != nil {
		c.log.Debug("a signal that is not JSON", "err", err)
		return
	}
	if s.Signal == "alternatives" && c.cfg.OnAlternatives != nil {
		c.cfg.OnAlternatives(s.BranchCount)
	}
}
