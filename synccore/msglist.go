package synccore

import (
	"iter"
	"slices"
	"strconv"
)

// MessageList is an immutable list of messages, oldest first: the messages
// of a view as a host that patches it (Mirror) hands them out. A new list
// shares everything it did not change with the list it was made from, so
// publishing a view after a delta costs O(log n) pointers, not a copy of
// the history, and a message that did not change is the same *Message in
// both (a UI compares pointers to skip it). The messages are shared: treat
// them as read-only. The zero value is an empty list; a MessageList is
// safe for concurrent readers.
type MessageList struct {
	root  *listNode
	n     int
	shift uint // the root's level times listBits; 0 when the root is a leaf
}

// The list is a trie of nodes of up to listWidth entries (a persistent
// vector): At walks one node per level, and a change copies the nodes on
// one path, never a leaf's neighbours.
const (
	listBits  = 5
	listWidth = 1 << listBits
	listMask  = listWidth - 1
)

// listNode is a leaf (msgs) or an inner node (kids). Nodes are never
// changed once a list that holds them is handed out.
type listNode struct {
	kids []*listNode
	msgs []*Message
}

// NewMessageList is a list of msgs, in their order (the slice is not kept).
func NewMessageList(msgs []*Message) MessageList {
	if len(msgs) == 0 {
		return MessageList{}
	}
	level := make([]*listNode, 0, (len(msgs)+listMask)/listWidth)
	for i := 0; i < len(msgs); i += listWidth {
		level = append(level, &listNode{msgs: slices.Clone(msgs[i:min(i+listWidth, len(msgs))])})
	}
	shift := uint(0)
	for len(level) > 1 {
		up := make([]*listNode, 0, (len(level)+listMask)/listWidth)
		for i := 0; i < len(level); i += listWidth {
			up = append(up, &listNode{kids: slices.Clone(level[i:min(i+listWidth, len(level))])})
		}
		level, shift = up, shift+listBits
	}
	return MessageList{root: level[0], n: len(msgs), shift: shift}
}

// Len is the number of messages.
func (l MessageList) Len() int { return l.n }

// At is message i (0 is the oldest). It panics if i is out of range, as
// indexing a slice does.
func (l MessageList) At(i int) *Message {
	if uint(i) >= uint(l.n) {
		panic("synccore: MessageList index " + strconv.Itoa(i) + " out of range [0:" + strconv.Itoa(l.n) + "]")
	}
	nd := l.root
	for s := l.shift; s > 0; s -= listBits {
		nd = nd.kids[(i>>s)&listMask]
	}
	return nd.msgs[i&listMask]
}

// Last is the newest message; false when the list is empty.
func (l MessageList) Last() (*Message, bool) {
	if l.n == 0 {
		return nil, false
	}
	return l.At(l.n - 1), true
}

// All iterates over the messages, oldest first, with their indexes:
//
//	for i, m := range v.Messages.All() { ... }
func (l MessageList) All() iter.Seq2[int, *Message] {
	return func(yield func(int, *Message) bool) {
		if l.root != nil {
			walkList(l.root, l.shift, new(int), yield)
		}
	}
}

// walkList yields the messages under nd in order, numbering them from *i;
// false when yield asked to stop.
func walkList(nd *listNode, shift uint, i *int, yield func(int, *Message) bool) bool {
	if shift == 0 {
		for _, m := range nd.msgs {
			if !yield(*i, m) {
				return false
			}
			*i++
		}
		return true
	}
	for _, k := range nd.kids {
		if !walkList(k, shift-listBits, i, yield) {
			return false
		}
	}
	return true
}

// appendTo appends the messages to dst, oldest first.
func (l MessageList) appendTo(dst []*Message) []*Message {
	dst = slices.Grow(dst, l.n)
	for _, m := range l.All() {
		dst = append(dst, m)
	}
	return dst
}

// Values is the messages as values, oldest first: a copy of every message
// (their Parts slices shared), for code that wants a []Message.
func (l MessageList) Values() []Message {
	out := make([]Message, 0, l.n)
	for _, m := range l.All() {
		out = append(out, *m)
	}
	return out
}

// set is l with message i replaced by m: the nodes on i's path are copied.
func (l MessageList) set(i int, m *Message) MessageList {
	l.root = setInNode(l.root, l.shift, i, m)
	return l
}

func setInNode(nd *listNode, shift uint, i int, m *Message) *listNode {
	if shift == 0 {
		c := &listNode{msgs: slices.Clone(nd.msgs)}
		c.msgs[i&listMask] = m
		return c
	}
	c := &listNode{kids: slices.Clone(nd.kids)}
	k := (i >> shift) & listMask
	c.kids[k] = setInNode(nd.kids[k], shift-listBits, i, m)
	return c
}

// push is l with m appended: the nodes on the last path are copied.
func (l MessageList) push(m *Message) MessageList {
	switch {
	case l.root == nil:
		return MessageList{root: &listNode{msgs: []*Message{m}}, n: 1}
	case l.n == 1<<(l.shift+listBits): // every slot of the trie is used: one level more
		l.root = &listNode{kids: []*listNode{l.root, pathTo(l.shift, m)}}
		l.shift += listBits
	default:
		l.root = pushInNode(l.root, l.shift, l.n, m)
	}
	l.n++
	return l
}

// pushInNode copies nd with m added as entry i (its count of messages).
func pushInNode(nd *listNode, shift uint, i int, m *Message) *listNode {
	if shift == 0 {
		return &listNode{msgs: append(slices.Clip(nd.msgs), m)}
	}
	k := (i >> shift) & listMask
	if k == len(nd.kids) {
		return &listNode{kids: append(slices.Clip(nd.kids), pathTo(shift-listBits, m))}
	}
	c := &listNode{kids: slices.Clone(nd.kids)}
	c.kids[k] = pushInNode(nd.kids[k], shift-listBits, i, m)
	return c
}

// pathTo is a chain of new nodes from level shift down to a leaf holding m.
func pathTo(shift uint, m *Message) *listNode {
	if shift == 0 {
		return &listNode{msgs: []*Message{m}}
	}
	return &listNode{kids: []*listNode{pathTo(shift-listBits, m)}}
}
