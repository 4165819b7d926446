package synccore

// Error codes. The same strings are used by the server's HTTP errors
// ({code, message}), by error frames and by the core's Output. Their HTTP
// statuses are in errorCodes (errcodes.go), the one table.
const (
	CodeMalformed        = "malformed"          // bytes that do not decode as the expected msgpack shape
	CodeUnknownEvent     = "unknown_event"      // an event type the core does not know
	CodeUnknownFrame     = "unknown_frame"      // a frame kind the core does not know
	CodeUnknownPartType  = "unknown_part_type"  // a part type outside the model
	CodeInvalidPart      = "invalid_part"       // a part the model forbids (e.g. a user part with a state)
	CodeInvalidMessage   = "invalid_message"    // a message the model forbids
	CodeSequenceChanged  = "sequence_changed"   // a part or message whose immutable sequence changed
	CodeRevisionBackward = "revision_backwards" // a revision lower than one already seen, where that is forbidden
	CodeDoneIsFinal      = "done_is_final"      // a change to a message that is done
	CodeBadRequest       = "bad_request"        // bad query parameters or body
	CodeTooLarge         = "too_large"          // a body or frame over its limit
	CodeNotFound         = "not_found"
	CodeNotPending       = "not_pending" // an answer to an interaction that is not pending
	CodeConflict         = "conflict"
	CodeUnauthorized     = "unauthorized"
	CodeForbidden        = "forbidden"    // a browser origin the server does not allow
	CodeRateLimited      = "rate_limited" // over a request rate or subscription bound; retry after Retry-After
	CodeInternal         = "internal"
	CodeClosed           = "closed"  // the client was closed
	CodeTimeout          = "timeout" // a host gave up waiting; never sent by a server

	// CodeCoreBroken is never sent by a server: the client core itself
	// panicked (or, in a host, trapped), its state may be torn, and the host
	// must discard it and rebuild it from the server's snapshot. A server's
	// internal error (an error frame) is CodeInternal and needs no rebuild.
	CodeCoreBroken = "core_broken"
)

// Error is the typed error of the kit: a stable code and a human message.
type Error struct {
	Code    string `msgpack:"code" json:"code"`
	Message string `msgpack:"message" json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Is lets errors.Is match on the code: errors.Is(err, &Error{Code: CodeMalformed}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// One sentinel per code, for errors.Is: errors.Is(err, ErrNotFound) holds
// for any *Error with code not_found in err's chain, whether the core, a
// host or the server made it (the Go host types a 404 answer as
// not_found, with or without the server's {code, message} body). Compare,
// never modify them.
var (
	ErrMalformed        = &Error{Code: CodeMalformed, Message: "malformed input"}
	ErrUnknownEvent     = &Error{Code: CodeUnknownEvent, Message: "unknown event"}
	ErrUnknownFrame     = &Error{Code: CodeUnknownFrame, Message: "unknown frame"}
	ErrUnknownPartType  = &Error{Code: CodeUnknownPartType, Message: "unknown part type"}
	ErrInvalidPart      = &Error{Code: CodeInvalidPart, Message: "invalid part"}
	ErrInvalidMessage   = &Error{Code: CodeInvalidMessage, Message: "invalid message"}
	ErrSequenceChanged  = &Error{Code: CodeSequenceChanged, Message: "sequence changed"}
	ErrRevisionBackward = &Error{Code: CodeRevisionBackward, Message: "revision went backwards"}
	ErrDoneIsFinal      = &Error{Code: CodeDoneIsFinal, Message: "the message is done"}
	ErrBadRequest       = &Error{Code: CodeBadRequest, Message: "bad request"}
	ErrTooLarge         = &Error{Code: CodeTooLarge, Message: "too large"}
	ErrNotFound         = &Error{Code: CodeNotFound, Message: "not found"}
	ErrNotPending       = &Error{Code: CodeNotPending, Message: "the interaction is not pending"}
	ErrConflict         = &Error{Code: CodeConflict, Message: "conflict"}
	ErrUnauthorized     = &Error{Code: CodeUnauthorized, Message: "unauthorized"}
	ErrForbidden        = &Error{Code: CodeForbidden, Message: "forbidden"}
	ErrRateLimited      = &Error{Code: CodeRateLimited, Message: "rate limited"}
	ErrInternal         = &Error{Code: CodeInternal, Message: "internal error"}
	ErrClosed           = &Error{Code: CodeClosed, Message: "closed"}
	ErrTimeout          = &Error{Code: CodeTimeout, Message: "timed out"}
	ErrCoreBroken       = &Error{Code: CodeCoreBroken, Message: "the core is broken"}
)
