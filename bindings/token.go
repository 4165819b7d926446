package bindings

import (
	"context"
	"fmt"
	"sync"
)

// TokenSource yields the bearer token of a client's requests and of its
// subscription. The host asks it for the first token before its first
// request, and again each time the server refuses the token it holds (401
// unauthorized, 403 forbidden): a token different from the refused one is
// used at once, for HTTP and the WebSocket alike, and the refused request
// is sent once more with it; the same token again (or an error) makes the
// refusal final, and a Client stops with it (Client.Err). Token may block
// (a refresh round trip) and is called from the client's goroutines, one
// call at a time per client.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenFunc adapts a function to TokenSource.
type TokenFunc func(ctx context.Context) (string, error)

// Token calls f.
func (f TokenFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

// tokens holds the current token of an API: the static Token, or the last
// one its TokenSource gave.
type tokens struct {
	mu      sync.Mutex
	fetched bool
	current string
}

// token is the token to send now ("" for none).
func (a *API) token(ctx context.Context) (string, error) {
	if a.TokenSource == nil {
		return a.Token, nil
	}
	a.toks.mu.Lock()
	defer a.toks.mu.Unlock()
	if a.toks.fetched {
		return a.toks.current, nil
	}
	t, err := a.TokenSource.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("bindings: token source: %w", err)
	}
	a.toks.current, a.toks.fetched = t, true
	return t, nil
}

// refresh is called after the server refused token: it reports whether a
// different token is now current (another caller may have refreshed it
// already), asking the TokenSource for one if not.
func (a *API) refresh(ctx context.Context, refused string) bool {
	if a.TokenSource == nil {
		return false
	}
	a.toks.mu.Lock()
	defer a.toks.mu.Unlock()
	if a.toks.fetched && a.toks.current != refused {
		return true
	}
	t, err := a.TokenSource.Token(ctx)
	if err != nil || t == refused {
		return false
	}
	a.toks.current, a.toks.fetched = t, true
	return true
}
