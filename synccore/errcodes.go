package synccore

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
	{CodeBadRequest, 400, true, "bad query parameter or body shape"},
	{CodeMalformed, 400, false, "bytes that do not decode as the expected msgpack or JSON shape"},
	{CodeUnknownPartType, 400, false, "a part type outside the model"},
	{CodeInvalidPart, 400, false, "a part the model forbids (e.g. a user part with a state)"},
	{CodeInvalidMessage, 400, false, "a message the model forbids"},
	{CodeUnknownEvent, 400, false, "an event type the core does not know"},
	{CodeUnknownFrame, 400, false, "a frame kind the core does not know"},
	{CodeSequenceChanged, 400, false, "a part or message whose immutable sequence changed"},
	{CodeRevisionBackward, 400, false, "a revision lower than one already seen, where that is forbidden"},
	{CodeUnauthorized, 401, true, "missing or wrong bearer token"},
	{CodeForbidden, 403, true, "a browser origin the server does not allow"},
	{CodeNotFound, 404, true, "unknown session, interaction or route"},
	{CodeConflict, 409, true, "an action or event that does not fit the current state"},
	{CodeNotPending, 409, false, "an answer to an interaction that is not pending"},
	{CodeDoneIsFinal, 409, false, "a change to a message that is done"},
	{CodeTooLarge, 413, true, "a body or frame over its limit"},
	{CodeRateLimited, 429, true, "over the request rate or the subscription bounds of a principal or session; retry after the Retry-After header's seconds"},
	{CodeInternal, 500, true, "a server bug; nothing committed is lost"},
	{CodeClosed, 503, false, "the server is stopping or the request was cancelled; from a client: it was closed"},
	{CodeTimeout, 0, false, "a host gave up waiting (e.g. for the session to become live)"},
	{CodeCoreBroken, 0, false, "the client core panicked or trapped: discard it and rebuild"},
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
		return CodeBadRequest
	}
	return CodeInternal
}
