package synccore

// Events the host feeds to the client core. Every event, command and the
// view have a msgpack form: the WebAssembly hosts pass them as bytes.
const (
	// EvStart begins syncing SessionID with the given options.
	EvStart = "start"
	// EvSubscriptionOpened: the WebSocket the core asked for is open.
	EvSubscriptionOpened = "subscription_opened"
	// EvFrames: one WebSocket binary message (a msgpack array of frames).
	EvFrames = "frames"
	// EvPage: the answer to a fetch_page command with the same RequestID.
	EvPage = "page"
	// EvPageFailed: a fetch_page failed (network or HTTP error).
	EvPageFailed = "page_failed"
	// EvConnectionLost: the WebSocket closed or failed. Jitter (0..1000)
	// is the host's randomness for the backoff; the core has none of its own.
	EvConnectionLost = "connection_lost"
	// EvTimerFired: a set_timer command's delay has passed.
	EvTimerFired = "timer_fired"
	// EvLoadOlder: the user wants older history.
	EvLoadOlder = "load_older"
	// EvSetIncludeInternal switches include_internal and re-reads.
	EvSetIncludeInternal = "set_include_internal"
	// EvClose stops syncing for good.
	EvClose = "close"
)

// Event is one input to the core.
type Event struct {
	Type string `msgpack:"type" json:"type"`

	// start
	SessionID       string `msgpack:"session_id,omitempty" json:"session_id,omitempty"`
	PageLimit       int    `msgpack:"page_limit,omitempty" json:"page_limit,omitempty"`
	IncludeInternal bool   `msgpack:"include_internal,omitempty" json:"include_internal,omitempty"`

	// frames: the raw bytes of one WebSocket message.
	// page: the msgpack bytes of the page exactly as the server sent them
	// (hosts that already decoded it may set Page instead).
	Data []byte `msgpack:"data,omitempty" json:"data,omitempty"`

	// page, page_failed: RequestID matches the fetch_page command
	RequestID uint64       `msgpack:"request_id,omitempty" json:"request_id,omitempty"`
	Page      *MessagePage `msgpack:"page,omitempty" json:"page,omitempty"`

	// page_failed, connection_lost: a description for logs and status
	Error string `msgpack:"error,omitempty" json:"error,omitempty"`
	// connection_lost: 0..1000, the host's randomness for backoff jitter
	Jitter int64 `msgpack:"jitter,omitempty" json:"jitter,omitempty"`

	// timer_fired
	TimerID uint64 `msgpack:"timer_id,omitempty" json:"timer_id,omitempty"`
}

// Commands the core returns for the host to carry out, in order.
const (
	// CmdOpenSubscription: open GET /v1/sessions/{SessionID}/subscribe and
	// report subscription_opened, then every binary message as frames.
	CmdOpenSubscription = "open_subscription"
	// CmdCloseSubscription: close the current WebSocket (no connection_lost
	// event is expected for a close the core asked for).
	CmdCloseSubscription = "close_subscription"
	// CmdFetchPage: GET messages with Limit/BeforeSequence/IncludeInternal
	// and report page or page_failed with the same RequestID.
	CmdFetchPage = "fetch_page"
	// CmdSetTimer: report timer_fired with TimerID after DelayMs.
	CmdSetTimer = "set_timer"
	// CmdRender: these messages changed (added, updated or removed);
	// Reset means the whole list changed. Read them from the view.
	CmdRender = "render"
	// CmdStatus: the connection status changed.
	CmdStatus = "status"
)

// Connection statuses, as reported by the status command and the view.
const (
	StatusIdle       = "idle"       // not started
	StatusConnecting = "connecting" // subscription asked for, no hello yet
	StatusSyncing    = "syncing"    // subscribed, reading the snapshot
	StatusLive       = "live"       // snapshot applied, stream continuous
	StatusBackoff    = "backoff"    // waiting to reconnect
	StatusClosed     = "closed"     // closed by the host
)

// Command is one instruction to the host.
type Command struct {
	Type string `msgpack:"type" json:"type"`

	// open_subscription, fetch_page
	SessionID string `msgpack:"session_id,omitempty" json:"session_id,omitempty"`

	// fetch_page
	RequestID       uint64 `msgpack:"request_id,omitempty" json:"request_id,omitempty"`
	Limit           int    `msgpack:"limit,omitempty" json:"limit,omitempty"`
	BeforeSequence  int64  `msgpack:"before_sequence,omitempty" json:"before_sequence,omitempty"`
	IncludeInternal bool   `msgpack:"include_internal,omitempty" json:"include_internal,omitempty"`

	// set_timer
	TimerID uint64 `msgpack:"timer_id,omitempty" json:"timer_id,omitempty"`
	DelayMs int64  `msgpack:"delay_ms,omitempty" json:"delay_ms,omitempty"`

	// render
	MessageIDs []string `msgpack:"message_ids,omitempty" json:"message_ids,omitempty"`
	Reset      bool     `msgpack:"reset,omitempty" json:"reset,omitempty"`

	// status, close_subscription
	Status string `msgpack:"status,omitempty" json:"status,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// Output is the msgpack answer of handleBytes: the commands, or the typed
// error that made the core reject the event (its state is then unchanged).
type Output struct {
	Commands []Command `msgpack:"commands" json:"commands"`
	Error    *Error    `msgpack:"error,omitempty" json:"error,omitempty"`
}

// View is what a host renders: the contiguous window of messages the client
// holds, oldest first, with streaming projections merged in.
type View struct {
	SessionID          string    `msgpack:"session_id" json:"session_id"`
	Status             string    `msgpack:"status" json:"status"`
	Messages           []Message `msgpack:"messages" json:"messages"`
	Total              int64     `msgpack:"total" json:"total"`
	HasMoreOlder       bool      `msgpack:"has_more_older" json:"has_more_older"`
	NextBeforeSequence int64     `msgpack:"next_before_sequence,omitempty" json:"next_before_sequence,omitempty"`
	LoadingOlder       bool      `msgpack:"loading_older" json:"loading_older"`
	IncludeInternal    bool      `msgpack:"include_internal" json:"include_internal"`
	// Digest is hex SHA-256 of the canonical encoding of Messages (see
	// digestMessages): equal on every host for the same view.
	Digest string `msgpack:"digest" json:"digest"`
}
