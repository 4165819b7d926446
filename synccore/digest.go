package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// digest.go is digestMessages. Two hosts, or a client and the server,
// holding the same logical messages get the same bytes whatever Go types
// their `any` values arrived as: the messages' fields are written as their
// msgpack struct tags say (appendCanonMessage, generated into codec_gen.go),
// except that an `any` field is left out only when nil and its value is
// written in canonical form (msgp.AppendCanonAny), and a nil slice is an
// empty array.

// digestMessages is the hex SHA-256 of the canonical msgpack encoding of
// msgs (an array of messages, each a map of its fields in declared order,
// empty optional fields left out). Servers use it to compare a client's
// view with their snapshot.
func digestMessages(msgs []Message) string {
	h := newDigestHash()
	var buf []byte
	buf = msgp.AppendArrayHeader(buf, len(msgs))
	for i := range msgs {
		buf = appendCanonMessage(buf, &msgs[i])
		if len(buf) > 64<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return msgp.HexString(h.Sum(nil))
}
