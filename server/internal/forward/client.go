package forward

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/synccore"
)

// DefaultTimeout bounds one forward when Client's timeout is zero: long
// enough for a delete that waits for a turn to stop, short enough that a
// stalled owner's client hears of it.
const DefaultTimeout = 10 * time.Second

var (
	// ErrUnreachable: no node listens on the owner's subject (it died, or
	// left NATS), or NATS itself is unreachable from here.
	ErrUnreachable = errors.New("forward: the owner is not reachable over NATS")
	// ErrTimeout: the owner did not answer within the timeout; it may or
	// may not have run the request.
	ErrTimeout = errors.New("forward: the owner did not answer in time")
)

// Client forwards requests from one node to the others.
type Client struct {
	nc      bus.Conn
	node    string
	timeout time.Duration
}

// NewClient forwards as node over nc, waiting timeout (0: DefaultTimeout)
// for each answer.
func NewClient(nc bus.Conn, node string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{nc: nc, node: node, timeout: timeout}
}

// Node is the name this client forwards as.
func (c *Client) Node() string { return c.node }

// Timeout is how long one forward waits for its answer.
func (c *Client) Timeout() time.Duration { return c.timeout }

// Forward sends req to node and returns its answer. Errors: ErrUnreachable
// and ErrTimeout (wrapped), ctx's own error when the caller gave up, and a
// typed CodeTooLarge when the request does not fit in one NATS message.
func (c *Client) Forward(ctx context.Context, node string, req *Request) (*Response, error) {
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req.From = c.node
	req.TimeoutMs = c.timeout.Milliseconds()
	data, err := encode(req)
	if err != nil {
		return nil, fmt.Errorf("forward: encode the request to node %q: %w", node, err)
	}
	if limit := c.nc.MaxPayload(); limit > 0 && int64(len(data)) > limit {
		return nil, synccore.Errorf(synccore.CodeTooLarge,
			"the request is %d bytes once forwarded to node %q, which serves the session, over the cluster's NATS max_payload of %d", len(data), node, limit)
	}
	msg, err := c.nc.Request(rctx, Subject(node), data)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, bus.ErrTimeout):
		return nil, fmt.Errorf("%w: node %q, after %s", ErrTimeout, node, c.timeout)
	default: // no responders, a closed or reconnecting connection
		return nil, fmt.Errorf("%w: node %q: %w", ErrUnreachable, node, err)
	}
	var resp Response
	if err := decode(msg.Data, &resp); err != nil {
		return nil, fmt.Errorf("forward: the answer of node %q: %w", node, err)
	}
	return &resp, nil
}
