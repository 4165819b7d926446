package bindings

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
)

// Branches is the answer of API.Branches: the alternatives at one position
// of a session's path and which of them the session takes (Index).
type Branches = httpwire.BranchList

// ForkOptions say what a fork does besides sharing the prefix
// (docs/protocol.md, "Conversation tree"): Parts post the fork's first own
// message (an edit), Regenerate runs the turn of the prefix's last user
// message again; neither is "fork from here".
type ForkOptions struct {
	Parts      []synccore.Part
	Regenerate bool
}

// Fork makes a new session of the same conversation whose messages before
// beforeSequence are sessionID's, shared (2..head+1; every message before
// it must be done: conflict otherwise). It returns the new session, which
// names its parent, fork sequence and root.
func (a *API) Fork(ctx context.Context, sessionID string, beforeSequence int64, opts ForkOptions) (Session, error) {
	var s Session
	err := a.do(ctx, http.MethodPost, sessionPath(sessionID, "fork"), nil,
		httpwire.ForkRequest{BeforeSequence: beforeSequence, Parts: opts.Parts, Regenerate: opts.Regenerate}, &s)
	return s, err
}

// Edit replaces the user message at sequence with parts, keeping the
// original: a fork before it whose first own message is the new one, its
// turn started.
func (a *API) Edit(ctx context.Context, sessionID string, sequence int64, parts ...synccore.Part) (Session, error) {
	return a.Fork(ctx, sessionID, sequence, ForkOptions{Parts: parts})
}

// Regenerate answers again the turn of the reply at sequence, keeping the
// original: a fork before it that runs the turn of the prefix's last user
// message again.
func (a *API) Regenerate(ctx context.Context, sessionID string, sequence int64) (Session, error) {
	return a.Fork(ctx, sessionID, sequence, ForkOptions{Regenerate: true})
}

// Branches lists the alternatives at position sequence of the session's
// path (1..head+1): each with the session that shows it and its message.
func (a *API) Branches(ctx context.Context, sessionID string, sequence int64) (Branches, error) {
	var out Branches
	err := a.do(ctx, http.MethodGet, sessionPath(sessionID, "branches"),
		url.Values{"sequence": {strconv.FormatInt(sequence, 10)}}, nil, &out)
	return out, err
}

// Alternatives lists the positions of the session's path with more than
// one alternative (how many, and which one the path takes), oldest first.
func (a *API) Alternatives(ctx context.Context, sessionID string) ([]httpwire.BranchCount, error) {
	var out httpwire.AlternativeList
	err := a.do(ctx, http.MethodGet, sessionPath(sessionID, "alternatives"), nil, nil, &out)
	return out.Items, err
}

// Alternatives lists the positions of the client's session's path with
// more than one alternative (API.Alternatives).
func (c *Client) Alternatives(ctx context.Context) ([]httpwire.BranchCount, error) {
	return c.api.Alternatives(ctx, c.cfg.SessionID)
}

// Fork forks the client's session (API.Fork).
func (c *Client) Fork(ctx context.Context, beforeSequence int64, opts ForkOptions) (Session, error) {
	return c.api.Fork(ctx, c.cfg.SessionID, beforeSequence, opts)
}

// Edit edits the client's session's user message at sequence (API.Edit).
func (c *Client) Edit(ctx context.Context, sequence int64, parts ...synccore.Part) (Session, error) {
	return c.api.Edit(ctx, c.cfg.SessionID, sequence, parts...)
}

// Regenerate regenerates the client's session's reply at sequence
// (API.Regenerate).
func (c *Client) Regenerate(ctx context.Context, sequence int64) (Session, error) {
	return c.api.Regenerate(ctx, c.cfg.SessionID, sequence)
}

// Branches lists the alternatives at position sequence of the client's
// session's path (API.Branches).
func (c *Client) Branches(ctx context.Context, sequence int64) (Branches, error) {
	return c.api.Branches(ctx, c.cfg.SessionID, sequence)
}

// SwitchBranch switches to another session of the conversation (a fork,
// or one named by Branches): it dials a Client of sessionID with this
// one's Config, which costs one page and a subscription, and closes this
// one once the new one is live. The new Client runs a new core of the
// same kind (a NativeCore stays native; otherwise a WasmCore on
// Config.Runtime). If the dial fails, this Client is left as it was.
func (c *Client) SwitchBranch(ctx context.Context, sessionID string) (*Client, error) {
	cfg := c.cfg
	cfg.SessionID = sessionID
	if _, native := c.cfg.Core.(*core.NativeCore); native {
		cfg.Core = core.NewNativeCore()
	} else {
		cfg.Core = nil
	}
	next, err := Dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("bindings: switch to %s: %w", sessionID, err)
	}
	_ = c.Close()
	return next, nil
}
