package synccore

import "testing"

// TestTotalCountsInternal: the view's total is every message the session
// created (the seed), internal ones included, even when the client does not
// show them; a frame seen twice counts once.
func TestTotalCountsInternal(t *testing.T) {
	c := liveClientWithText(t, "hello") // message 1, total 1
	if got := c.View().Total; got != 1 {
		t.Fatalf("total %d after the first page, want 1", got)
	}
	internal := Message{MessageID: "m2", SessionID: "s", Sequence: 2, Revision: 1, Role: RoleUser,
		Visibility: VisibilityInternal, CreatedAt: 2, Parts: []Part{{PartID: "p1", Sequence: 1, Type: PartText, Text: "recover"}}}
	visible := Message{MessageID: "m3", SessionID: "s", Sequence: 3, Revision: 1, Role: RoleUser,
		Visibility: VisibilityVisible, CreatedAt: 3, Parts: []Part{{PartID: "p1", Sequence: 1, Type: PartText, Text: "hi"}}}
	c.handleBytes(encodeEvent(framesEvent(Frame{Seq: 2, Kind: FrameMessage, Message: &internal})))
	v := c.View()
	if v.Total != 2 || len(v.Messages) != 1 {
		t.Fatalf("after an internal message: total %d, %d messages; want 2 and the internal one hidden", v.Total, len(v.Messages))
	}
	c.handleBytes(encodeEvent(framesEvent(Frame{Seq: 3, Kind: FrameMessage, Message: &visible}, Frame{Seq: 4, Kind: FrameMessage, Message: &visible})))
	if v := c.View(); v.Total != 3 || len(v.Messages) != 2 || c.Status() != StatusLive {
		t.Fatalf("after a visible message sent twice: total %d, %d messages, %s; want 3, 2, live", v.Total, len(v.Messages), c.Status())
	}
}
