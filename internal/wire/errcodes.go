package wire

import "github.com/agentsync/agentsync/synccore"

// ErrorCode is one row of the protocol's error table (docs/protocol.md §3).
type ErrorCode struct {
	Code string
	// Status is the HTTP status a server answers with this code; 0 for a
	// code that only a client or host reports (never an HTTP answer).
	Status int
	// ForStatus marks the code a client reports for an HTTP answer with
	// this status and no typed {code, message} body (a proxy's answer, a
	// truncated body). One row per status at most.
	ForStatus bool
	Doc       string
}

// ErrorCodes is the one error table: the server maps codes to statuses
// with it, the Go host maps bare statuses back, and js/errcodes.js is
// generated from it (go generate ./js). Statuses are written as numbers
// so that the wasm module never links net/http.
var ErrorCodes = []ErrorCode{
	{synccore.CodeBadRequest, 400, true, "bad query parameter or body shape"},
	{synccore.CodeMalformed, 400, false, "bytes that do not decode as the expected msgpack or JSON shape"},
	{synccore.CodeUnknownPartType, 400, false, "a part type outside the model"},
	{synccore.CodeInvalidPart, 400, false, "a part the model forbids (e.g. a user part with a state)"},
	{synccore.CodeInvalidMessage, 400, false, "a message the model forbids"},
	{synccore.CodeUnknownEvent, 400, false, "an event type the core does not know"},
	{synccore.CodeUnknownFrame, 400, false, "a frame kind the core does not know"},
	{synccore.CodeSequenceChanged, 400, false, "a part or message whose immutable sequence changed"},
	{synccore.CodeRevisionBackward, 400, false, "a revision lower than one already seen, where that is forbidden"},
	{synccore.CodeUnauthorized, 401, true, "missing or wrong bearer token"},
	{synccore.CodeForbidden, 403, true, "a browser origin the server does not allow"},
	{synccore.CodeNotFound, 404, true, "unknown session, interaction or route"},
	{synccore.CodeConflict, 409, true, "an action or event that does not fit the current state"},
	{synccore.CodeNotPending, 409, false, "an answer to an interaction that is not pending"},
	{synccore.CodeDoneIsFinal, 409, false, "a change to a message that is done"},
	{synccore.CodeTooLarge, 413, true, "a body or frame over its limit"},
	{synccore.CodeRateLimited, 429, true, "over the request rate or the subscription bounds of a principal or session; retry after the Retry-After header's seconds"},
	{synccore.CodeInternal, 500, true, "a server bug; nothing committed is lost"},
	{synccore.CodeClosed, 503, false, "the server is stopping or the request was cancelled; from a client: it was closed"},
	{synccore.CodeTimeout, 0, false, "a host gave up waiting (e.g. for the session to become live)"},
	{synccore.CodeCoreBroken, 0, false, "the client core panicked or trapped: discard it and rebuild"},
}

// HTTPStatus is the status a server answers code with; a code outside the
// table is a server bug, 500.
func HTTPStatus(code string) int {
	for _, e := range ErrorCodes {
		if e.Code == code && e.Status != 0 {
			return e.Status
		}
	}
	return 500
}

// CodeForHTTPStatus is the code for an HTTP error answer that carries no
// typed body: the table's row for that status, else bad_request for any
// other 4xx and internal for anything else.
func CodeForHTTPStatus(status int) string {
	for _, e := range ErrorCodes {
		if e.ForStatus && e.Status == status {
			return e.Code
		}
	}
	if status >= 400 && status < 500 {
		return synccore.CodeBadRequest
	}
	return synccore.CodeInternal
}
