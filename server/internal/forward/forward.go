// Package forward carries a request for a session from a node that does not
// serve it to the node that does, over NATS request/reply, so a client may
// send any request to any node of a cluster (docs/storage.md, Forwarding).
//
// The receiving node runs the request up to the session's lease claim; when
// another live node holds the lease, its API sends the request (method,
// path, body, the headers that shape the answer, and the principal it
// authenticated) on that node's subject, Subject(node). The owner runs it as
// if it had arrived there, for that principal, and replies with its exact
// answer: status, the headers that matter, body. The package is the
// transport (Client, Serve) and the wire (Request, Response); the API
// decides what to forward and executes what it receives.
//
// Trust boundary: a request on a node's subject acts for the principal it
// names, without a token. Only the cluster's nodes may publish on
// "agentsync.node.>" (a NATS account or permissions of their own).
package forward

import (
	"strings"
)

// subjectPrefix is the root of the nodes' request subjects.
const subjectPrefix = "agentsync.node."

// Subject is the NATS subject node answers forwarded requests on:
// agentsync.node.<node>.req. A node name is one subject token: letters,
// digits and '-' stay as they are; any other byte ('.', '*', '>', spaces,
// '_' itself) becomes '_' and two hex digits, so distinct names never share
// a subject.
func Subject(node string) string {
	var b strings.Builder
	b.Grow(len(subjectPrefix) + len(node) + 4)
	b.WriteString(subjectPrefix)
	const hex = "0123456789abcdef"
	for i := 0; i < len(node); i++ {
		c := node[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	b.WriteString(".req")
	return b.String()
}
