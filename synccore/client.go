package synccore

// Options configure a Client. The zero value is usable.
type Options struct{}

// Client is the sans-IO sync state machine. It is not safe for concurrent
// use; a host serialises calls.
//
// STUB: the API below is the contract the hosts code against; the reducer
// fills in the bodies.
type Client struct{}

// NewClient returns an idle client. Feed it an EvStart event to begin.
func NewClient(opts Options) *Client { return &Client{} }

// Handle applies one event and returns the commands for the host, in order.
// A rejected event returns a typed *Error and leaves the state unchanged.
func (c *Client) Handle(ev Event) ([]Command, error) {
	return nil, Errorf(CodeInternal, "not implemented")
}

// HandleBytes is Handle over msgpack bytes: an Event in, an Output out.
// It never panics.
func (c *Client) HandleBytes(event []byte) []byte { return nil }

// View returns the current view (a copy the caller owns).
func (c *Client) View() View { return View{} }

// ViewBytes is the msgpack encoding of View.
func (c *Client) ViewBytes() []byte { return nil }

// Message returns one message of the view by id (a copy the caller owns).
func (c *Client) Message(id string) (Message, bool) { return Message{}, false }

// MessageBytes is the msgpack encoding of Message(id), nil if absent.
func (c *Client) MessageBytes(id string) []byte { return nil }

// Digest is the hex SHA-256 digest of the view's messages (DigestMessages).
func (c *Client) Digest() string { return "" }

// DigestMessages is the hex SHA-256 of the canonical msgpack encoding of
// msgs. Servers use it to compare a client's view with their snapshot.
func DigestMessages(msgs []Message) string { return "" }
