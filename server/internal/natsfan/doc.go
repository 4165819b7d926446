// Package natsfan carries a session's frames between server nodes over
// NATS, so a subscriber may connect to any node (docs/storage.md).
//
// The node that serves a session (holds its lease) publishes every batch
// of frames it hands its own subscribers on agentsync.frames.<session>,
// numbered by a counter of its ownership and tagged with the lease's
// epoch (Publisher), and answers requests on agentsync.snapshot.<session>
// with the session's state at a counter: its head sequence, the
// streaming message's last committed revision and the parts streamed
// since (what a subscriber joining mid-stream needs).
//
// A node with local subscribers of a session it does not serve follows
// it (Follower): it subscribes to the frames first, then asks for the
// snapshot, drops the frames the snapshot already holds and applies the
// rest in counter order to a mirror of that state and to its local
// fan-out hub. Every local subscriber then gets today's guarantees: a
// gapless seq (the hub numbers frames per subscriber), the mid-stream
// join projection (from the mirror), slow consumers resynced (the hub).
// Anything that could lose or reorder frames (a gap in the counter, a
// new epoch, a lost NATS connection, a delta that does not fit the
// mirror) ends the follow with a resync frame (owner_changed): the
// subscribers reconnect and re-read the committed snapshot, so text is
// never torn or doubled.
package natsfan
