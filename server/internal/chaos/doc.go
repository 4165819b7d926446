// Package chaos holds the kit's chaos test (chaos_test.go): three real
// syncserver processes on one throwaway PostgreSQL and one NATS server,
// clients of both hosts (the Go host under wazero and natively, the
// JavaScript host in Node) spread over the nodes and through a proxy that
// cuts connections, and one fault per run: a node killed with SIGKILL, an
// owner paused (SIGSTOP) past or under its lease, NATS restarted or cut
// off from one node, PostgreSQL restarted. Every run checks what the
// protocol promises (docs/protocol.md, "Failover"): every client's view
// equals the store's, nothing a client saw done ever changed, and no
// message streams past the bound.
//
// `make test` plays each fault once; AGENTSYNC_CHAOS_RUNS=N plays N runs
// with faults chosen at random (AGENTSYNC_CHAOS_SEED replays a sequence),
// for release checks.
package chaos
