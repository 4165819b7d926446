// Package session is the server's session engine: it runs turns against a
// model, keeps the streaming projection of the current agent message in
// memory, commits semantic checkpoints to the store and fans frames out to
// subscribers.
//
// Every change of a session happens under that session's lock, so commits,
// published frames and new subscriptions are in one total order: a
// `message` frame is published only after its revision is committed, and a
// subscriber's hello and join projection are exactly the state the frames
// after them build on.
//
// # Turns
//
// A user message starts a turn, or joins the running one (a steer: the
// turn's next model step reads it from the history; a model that stops
// while a steer is unseen gets one more step). One turn writes one agent
// message, created (revision 1, streaming, no parts) when the first step
// starts so a crash leaves a row that recovery closes. Each step's parts
// carry its step_id ("step-1", "step-2"...).
//
// # What the model reads
//
// Each step's input is composed from the committed history (window.go):
// the newest messages that fit the model's context budget, after a stored
// summary standing for the older ones (made by the session's model when
// the recent messages outgrow the budget, kept in its own table, never a
// message). A step reads O(budget), whatever the session's length.
//
// # Retry, and messages no step read
//
// A turn closed with a recoverable error part can be retried (action
// "retry"): an internal user message, the recovery prompt, is committed
// in that turn and the turn runs again into a new agent message. A user
// message that joined a turn no step of which read it before the turn was
// stopped or failed starts the next run of that turn.
//
// # What is committed, and when
//
//   - a user message; the agent message's creation;
//   - each completed model step, in one transaction (with the close of the
//     message when it is the last step);
//   - each tool: before it runs (running, or suspended on an interaction
//     together with the pending interaction) and after (its output);
//   - an answer: the interaction and its tool in one transaction;
//   - an action; the close of a stopped, failed or shut-down turn.
//
// Deltas are never written. A checkpoint taken in the middle of a step (an
// action appended to the streaming message) includes the text streamed so
// far, still in state streaming; the next deltas continue from it at the
// new revision.
//
// # Interactions
//
// Approvals gate a tool that needs one (the tool's spec, or the session's
// approval mode "ask"): the tool is awaiting-approval next to an interaction
// whose request is {kind: "approval", tool_call_id, tool_name, input}; an
// approval makes it running, a denial output-denied with output
// {denied: true, reason}. A question is a tool that asks the user (the demo
// tool ask_user): it is running while an interaction {kind: "question",
// question, tool_call_id} is pending, and the answer {answer} becomes its
// output.
//
// # How a turn can end
//
// Normally (the last step closes the message), or with an error part of
// scope "turn", recoverable, after closing every open part (text kept as
// streamed, unfinished tools output-error, pending interactions cancelled):
// "stopped" (with the stop action part before it), "shutdown",
// "model_error", "too_many_steps", a synccore code for a model that broke
// the part rules (e.g. "invalid_part"), or "interrupted" (written by crash
// recovery at the next start).
package session
