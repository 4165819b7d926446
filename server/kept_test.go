package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/synccore"
)

// TestKeptTextsOnTheWire streams a long answer to two subscribers, one that
// asked for kept texts (?kept=1, protocol §4.5) and one that did not. The
// first gets the part frame that ends the text and the message frame that
// commits it without the text it was sent; rebuilt from its frames alone,
// its text is exactly the other's, which came whole.
func TestKeptTextsOnTheWire(t *testing.T) {
	s := start(t, "", server.Config{Authorizer: byHeader})
	sid := s.createSession("alice")
	dial := func(query string) *websocket.Conn {
		url := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/v1/sessions/" + sid + "/subscribe" + query
		c, _, err := websocket.DefaultDialer.Dial(url, http.Header{"X-User": {"alice"}})
		if err != nil {
			t.Fatalf("subscribe%s: %v", query, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	url := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/v1/sessions/" + sid + "/subscribe?kept=yes"
	if _, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"X-User": {"alice"}}); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("kept=yes: %v, want 400", err)
	}
	kept, whole := dial("?kept=1"), dial("")
	const chars = 30000
	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/messages",
		`{"parts":[{"type":"text","text":"scenario:long chars=30000 delta=16"}]}`); a.status != http.StatusCreated {
		t.Fatalf("post: %d %s", a.status, a.body)
	}
	keptText, keptFrames := follow(t, kept)
	wholeText, _ := follow(t, whole)
	if len([]rune(wholeText)) != chars || keptText != wholeText {
		t.Fatalf("texts: kept %d bytes, whole %d bytes (%d characters): they differ", len(keptText), len(wholeText), len([]rune(wholeText)))
	}
	if keptFrames < 2 {
		t.Fatalf("%d frames came with kept texts; want the closing part frame and the commit", keptFrames)
	}
}

// follow reads c until the agent's message is committed done, rebuilding
// its text part from the frames alone as a client would (deltas appended,
// kept beginnings put back), and returns the text and how many frames
// carried kept texts.
func follow(t *testing.T, c *websocket.Conn) (string, int) {
	t.Helper()
	text := map[string]string{} // part id -> text
	keptFrames := 0
	take := func(f synccore.Frame, p *synccore.Part) {
		for _, k := range f.Kept {
			if k.PartID == p.PartID {
				if int64(len(text[p.PartID])) != k.Len {
					t.Fatalf("frame %d keeps %d bytes of %q, the subscriber holds %d", f.Seq, k.Len, p.PartID, len(text[p.PartID]))
				}
				text[p.PartID] += p.Text
				return
			}
		}
		text[p.PartID] = p.Text
	}
	for {
		frames, err := readFrames(c, 30*time.Second)
		if err != nil {
			t.Fatalf("reading frames: %v", err)
		}
		for _, f := range frames {
			if len(f.Kept) > 0 {
				keptFrames++
			}
			switch f.Kind {
			case synccore.FrameDelta:
				if int64(len(text[f.PartID])) != f.Offset {
					t.Fatalf("delta %d at offset %d, text is %d bytes", f.Seq, f.Offset, len(text[f.PartID]))
				}
				text[f.PartID] += f.Text
			case synccore.FramePart:
				take(f, f.Part)
			case synccore.FrameMessage:
				m := f.Message
				if m.Role != synccore.RoleAgent {
					continue
				}
				for i := range m.Parts {
					if m.Parts[i].Type == synccore.PartText {
						take(f, &m.Parts[i])
					}
				}
				if m.State == synccore.MessageDone {
					for i := range m.Parts {
						if m.Parts[i].Type == synccore.PartText {
							return text[m.Parts[i].PartID], keptFrames
						}
					}
					t.Fatal("the answer has no text part")
				}
			}
		}
	}
}
