package synccore

// table.go is the client's whole state machine as data: for every status
// and every event, what the client does and which statuses it may end in.
// Handle dispatches through this table and nothing else, and
// table_test.go drives every cell and checks the outcome against it, so
// the table is the specification an auditor reads.

// action is what the client does with an event in a given status.
type action uint8

const (
	doReject      action = iota // typed CodeConflict error; nothing changes
	doClosedError               // typed CodeClosed error; nothing changes
	doIgnore                    // accepted; no commands, nothing changes (stale input)
	doStart                     // status connecting + open_subscription
	doOpened                    // the socket is open; wait for the hello
	doFrames                    // check seq; hello -> fetch head; buffer or apply; gap -> resync
	doPage                      // match request_id: head page (snapshot) or older page
	doPageFailed                // head page: resync with backoff; older page: retry timer
	doLost                      // backoff + set_timer
	doTimer                     // reconnect timer -> open_subscription; older retry -> fetch_page
	doLoadOlder                 // fetch_page(before_sequence = oldest held)
	doSetInternal               // switch include_internal; re-read the head into a new window
	doClose                     // close_subscription if open, status closed
)

var actionNames = [...]string{"reject", "closed_error", "ignore", "start", "opened", "frames",
	"page", "page_failed", "lost", "timer", "load_older", "set_include_internal", "close"}

func (a action) String() string { return actionNames[a] }

// statuses and events index the table.
var statuses = [...]string{StatusIdle, StatusConnecting, StatusSyncing, StatusLive, StatusBackoff, StatusClosed}

var events = [...]string{EvStart, EvSubscriptionOpened, EvFrames, EvPage, EvPageFailed,
	EvConnectionLost, EvTimerFired, EvLoadOlder, EvSetIncludeInternal, EvClose}

// cell is one entry of the table: the action and the statuses the client
// may be in afterwards (which one depends on the event's content).
type cell struct {
	do   action
	next []string
}

const (
	idle, connecting, syncing = StatusIdle, StatusConnecting, StatusSyncing
	live, backoff, closed     = StatusLive, StatusBackoff, StatusClosed
)

func mk(do action, next ...string) cell { return cell{do, next} }

// transitions[status][event]. Rows follow statuses, columns follow events:
//
//	            start   opened  frames              page                 page_failed      lost     timer               load_older  set_internal       close
//	idle        start   reject  reject              reject               reject           reject   reject              reject      set(idle)          close
//	connecting  reject  opened  frames(sync|back)   page(conn)           failed(conn)     lost     timer(conn)         older       set(conn)          close
//	syncing     reject  ignore  frames(sync|back)   page(sync|live|back) failed(sync|back) lost    timer(sync)         older       set(sync)          close
//	live        reject  ignore  frames(live|back)   page(live)           failed(live)     lost     timer(live)         older       set(live|sync)     close
//	backoff     reject  ignore  ignore              page(back)           failed(back)     ignore   timer(back|conn)    older       set(back)          close
//	closed      closed  closed  closed              closed               closed           closed   closed              closed      closed             closed
var transitions = [len(statuses)][len(events)]cell{
	{ // idle
		mk(doStart, connecting), mk(doReject, idle), mk(doReject, idle), mk(doReject, idle), mk(doReject, idle),
		mk(doReject, idle), mk(doReject, idle), mk(doReject, idle), mk(doSetInternal, idle), mk(doClose, closed),
	},
	{ // connecting: the subscription was asked for, no hello yet
		mk(doReject, connecting), mk(doOpened, connecting), mk(doFrames, syncing, backoff), mk(doPage, connecting),
		mk(doPageFailed, connecting), mk(doLost, backoff), mk(doTimer, connecting), mk(doLoadOlder, connecting),
		mk(doSetInternal, connecting), mk(doClose, closed),
	},
	{ // syncing: hello seen, reading the snapshot, frames buffered
		mk(doReject, syncing), mk(doIgnore, syncing), mk(doFrames, syncing, backoff), mk(doPage, syncing, live, backoff),
		mk(doPageFailed, syncing, backoff), mk(doLost, backoff), mk(doTimer, syncing), mk(doLoadOlder, syncing),
		mk(doSetInternal, syncing), mk(doClose, closed),
	},
	{ // live: snapshot applied, frames applied as they come
		mk(doReject, live), mk(doIgnore, live), mk(doFrames, live, backoff), mk(doPage, live),
		mk(doPageFailed, live), mk(doLost, backoff), mk(doTimer, live), mk(doLoadOlder, live),
		mk(doSetInternal, live, syncing), mk(doClose, closed),
	},
	{ // backoff: no subscription; waiting for the reconnect timer
		mk(doReject, backoff), mk(doIgnore, backoff), mk(doIgnore, backoff), mk(doPage, backoff),
		mk(doPageFailed, backoff), mk(doIgnore, backoff), mk(doTimer, backoff, connecting), mk(doLoadOlder, backoff),
		mk(doSetInternal, backoff), mk(doClose, closed),
	},
	{ // closed: final
		mk(doClosedError, closed), mk(doClosedError, closed), mk(doClosedError, closed), mk(doClosedError, closed),
		mk(doClosedError, closed), mk(doClosedError, closed), mk(doClosedError, closed), mk(doClosedError, closed),
		mk(doClosedError, closed), mk(doClosedError, closed),
	},
}

func statusIndex(s string) int {
	for i, x := range statuses {
		if x == s {
			return i
		}
	}
	return -1
}

func eventIndex(t string) int {
	for i, x := range events {
		if x == t {
			return i
		}
	}
	return -1
}

// lookup returns the cell for the client's status and an event type.
func lookup(status, event string) (cell, bool) {
	si, ei := statusIndex(status), eventIndex(event)
	if si < 0 || ei < 0 {
		return cell{}, false
	}
	return transitions[si][ei], true
}
