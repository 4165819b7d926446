// Package e2e holds the reference server's end-to-end tests and
// benchmarks: a real server on 127.0.0.1, a real SQLite file per test,
// real HTTP and WebSocket clients, and the real binary for the crash test.
package e2e
