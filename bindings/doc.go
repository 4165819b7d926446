// Package bindings runs the agentsync client core in Go programs and syncs a
// session with a server: a terminal UI, a bot or a backend-for-frontend keeps
// an exact view of an agent session with a few calls.
//
//	c, err := bindings.Dial(ctx, bindings.Config{BaseURL: "http://127.0.0.1:8080", SessionID: id})
//	if err != nil { ... }
//	defer c.Close()
//	unsubscribe := c.Subscribe(func(v bindings.View) { render(v) })
//	defer unsubscribe()
//	_, err = c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "hello"})
//
// A View is immutable and cheap: its Messages (a synccore.MessageList) share
// every message that did not change with the previous view, as the same
// *synccore.Message, so a renderer skips a message whose pointer it already
// drew and a view costs O(log n) to publish, not a copy of the history:
//
//	func render(v bindings.View) {
//		for _, m := range v.Messages.All() {
//			if drawn[m.MessageID] != m { // new or changed
//				draw(m)
//				drawn[m.MessageID] = m
//			}
//		}
//	}
//
// Watch reports what changed (text appended, parts and messages replaced)
// for a renderer that appends streamed text instead of redrawing a message.
//
// The core is the same WebAssembly module that browsers run (wasm/module),
// executed by wazero, so a Go host behaves byte for byte like every other
// host. Cores live in package bindings/core, the base client (core.Core,
// core.WasmCore on a core.Runtime, core.NativeCore running the same
// synccore code directly); this package is the application's client on
// top of it (Dial, Client, Config, View, API, Session), and an application
// names a core only to change the default (Config.Core, Config.Runtime).
//
// A Client owns the WebSocket and the HTTP reads the core asks for, runs the
// core in one goroutine, and recovers by itself: a lost connection is
// re-established with backoff, and a core that traps is rebuilt and resynced
// from the server's snapshot, with nothing lost to the caller.
//
// What cannot be retried ends the client at once, typed: a session that is
// gone (errors.Is(err, synccore.ErrNotFound)) and a token the server
// refuses (synccore.ErrUnauthorized) unless Config.TokenSource gives a new
// one, which is then used for HTTP and the WebSocket. Dial also returns the
// first network failure (a *NetworkError, errors.Is(err, ErrNetwork),
// Retryable); a client made by New retries it and shows it (View.Cause).
// Client.Reconnect connects at once when the client waits in backoff (the
// network is known to be back). See docs/protocol.md §6.8.
//
// A Cache (Config.Cache; bindings/cache keeps one in a SQLite file, and
// only that package links SQLite) holds an outbox: Client.Queue keeps a
// send with its Idempotency-Key before posting it, and the queue is posted
// in order when the session is live again, also by the next run of the
// program, never twice (docs/protocol.md §6.9).
package bindings
