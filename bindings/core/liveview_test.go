package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// liveView brings core to live holding msgs messages, alternately user and
// agent; the agent message nearest the middle is streaming, with a text
// part of size bytes. It returns that message's id.
func liveView(b testing.TB, core Core, size, msgs int) string {
	b.Helper()
	must := func(cmds []synccore.Command, err error) []synccore.Command {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		return cmds
	}
	must(core.Handle(synccore.Event{Type: synccore.EvStart, SessionID: "s1", PageLimit: 200}))
	must(core.Handle(synccore.Event{Type: synccore.EvSubscriptionOpened}))
	cmds := must(core.Handle(framesEvent(b, synccore.Frame{Seq: 1, Kind: synccore.FrameHello, Protocol: 1, SessionID: "s1", HeadSequence: int64(msgs)})))
	var reqID uint64
	for _, c := range cmds {
		if c.Type == synccore.CmdFetchPage {
			reqID = c.RequestID
		}
	}
	page := synccore.MessagePage{Total: int64(msgs), StartSequence: 1, EndSequence: int64(msgs)}
	target := ""
	for i := 1; i <= msgs; i++ {
		m := synccore.Message{MessageID: fmt.Sprintf("m%d", i), SessionID: "s1", Sequence: int64(i), Revision: 1,
			Role: synccore.RoleUser, Visibility: synccore.VisibilityVisible, CreatedAt: int64(i),
			Parts: []synccore.Part{{PartID: "p1", Sequence: 1, Type: synccore.PartText, Text: "a question of some length"}}}
		if i%2 == 0 {
			m.Role, m.TurnID, m.State = synccore.RoleAgent, "t", synccore.MessageDone
			m.Parts[0].StepID, m.Parts[0].State = "s", synccore.StateDone
			if target == "" && i >= msgs/2 {
				target = m.MessageID
				m.State, m.Parts[0].State, m.Parts[0].Text = synccore.MessageStreaming, synccore.StateStreaming, strings.Repeat("a", size)
			}
		}
		page.Items = append(page.Items, m)
	}
	must(core.Handle(synccore.Event{Type: synccore.EvPage, RequestID: reqID, Data: encode(b, page)}))
	return target
}
