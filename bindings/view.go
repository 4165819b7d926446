package bindings

import "github.com/agentsync/agentsync/synccore"

// View is the session as a Client shows it: the connection status and the
// window of messages held. A Client hands out a new View after every
// change and never changes one it handed out, so a View may be kept,
// compared with the next one and read from any goroutine.
//
// Reading a view costs nothing per delta: Messages is an immutable list
// that shares everything unchanged with the previous view's. A message
// that did not change between two views is the same *synccore.Message in
// both, and a changed one is a new *synccore.Message (with its own Parts
// slice): a UI compares pointers to find what to render again. The
// messages are shared by every view and watcher: treat them as read-only.
type View struct {
	SessionID string
	// Status is the connection status (synccore.Status*).
	Status string
	// Reason is why the status is what it is, as the core said (e.g.
	// "connection lost: ..."); empty when live.
	Reason string
	// Cause is the last failure to connect or read since the client was
	// last live: a *NetworkError, or the server's *synccore.Error (a 503
	// closed, a 429 rate_limited; a not_found or unauthorized one ends
	// the client, see Client.Err). Nil while live.
	Cause error
	// Messages is the window, oldest first.
	Messages synccore.MessageList
	// Total is the number of messages in the session (not only the window).
	Total int64
	// HasMoreOlder says LoadOlder has history to read before the window;
	// NextBeforeSequence is where it would start.
	HasMoreOlder       bool
	NextBeforeSequence int64
	// LoadingOlder is true while a LoadOlder read is under way.
	LoadingOlder    bool
	IncludeInternal bool
	// Cached is true while the messages are the window kept in
	// Config.Cache, shown before the core holds the snapshot (an offline
	// reading; Status says whether it is connecting): never live.
	Cached bool
}

// viewOf is a core's whole view as a Client's View.
func viewOf(v synccore.View) View {
	msgs := make([]*synccore.Message, len(v.Messages))
	for i := range v.Messages {
		msgs[i] = &v.Messages[i]
	}
	return View{SessionID: v.SessionID, Status: v.Status, Messages: synccore.NewMessageList(msgs),
		Total: v.Total, HasMoreOlder: v.HasMoreOlder, NextBeforeSequence: v.NextBeforeSequence,
		LoadingOlder: v.LoadingOlder, IncludeInternal: v.IncludeInternal}
}
