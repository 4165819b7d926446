package e2e

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/synccore"
)

const openAIFixtures = "../../model/testdata/openai/"

// killDuringProviderStream starts the real binary against a fake OpenAI
// server, kills it with SIGKILL while the answer streams, and returns the
// session id and the history the restart finds. extra are the restart's
// flags.
func killDuringProviderStream(t *testing.T, srv *providertest.Server, extra ...string) (*testServer, string) {
	t.Helper()
	bin := buildServer(t)
	args := []string{"-db", filepath.Join(t.TempDir(), "retry.db"), "-log-level", "warn",
		"-model", "openai:gpt-4o-mini", "-openai-base-url", srv.URL + "/v1", "-model-retry-wait", "1ms"}
	srv.Queue(providertest.Reply{Fixture: openAIFixtures + "text.sse", Delay: 150 * time.Millisecond})
	p := startProc(t, bin, args...)
	s := p.client(t)

	var sess struct {
		sessionBody
		Actions []string `json:"actions"`
		Models  []string `json:"models"`
	}
	s.do("POST", "/v1/sessions", map[string]any{}).expect(t, http.StatusCreated, &sess)
	if !slices.Contains(sess.Actions, "retry") || sess.Models[0] != "openai:gpt-4o-mini" || sess.Model != "openai:gpt-4o-mini" {
		t.Fatalf("session %+v: want actions with retry and the OpenAI model first", sess)
	}
	sid := sess.SessionID
	s.say(sid, "hi")
	s.waitFor(sid, 20*time.Second, "the agent message and the model request", func(msgs []synccore.Message) bool {
		return len(srv.Requests()) == 1 && len(msgs) == 2
	})
	time.Sleep(200 * time.Millisecond) // the first events are out, the rest still coming
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 10*time.Second); err == nil {
		t.Fatal("the process survived SIGKILL")
	}
	srv.Queue(providertest.Reply{Fixture: openAIFixtures + "text.sse"})
	p2 := startProc(t, bin, append(args, extra...)...)
	return p2.client(t), sid
}

// answeredAfterRetry checks the end state: the interrupted message closed
// with "interrupted", an internal recovery prompt, then a done answer in
// the same turn; the model read the prompt.
func answeredAfterRetry(t *testing.T, s *testServer, srv *providertest.Server, sid string) {
	t.Helper()
	msgs := s.waitFor(sid, 20*time.Second, "a done answer after the retry", func(msgs []synccore.Message) bool {
		return len(msgs) == 4 && noneStreaming(msgs)
	})
	cut, prompt, answer := msgs[1], msgs[2], msgs[3]
	if errs := partsOf(cut, synccore.PartError); len(errs) != 1 || errs[0].Code != "interrupted" {
		t.Fatalf("interrupted message: %s", summary(msgs))
	}
	if prompt.Role != synccore.RoleUser || prompt.Visibility != synccore.VisibilityInternal ||
		!strings.Contains(textOf(prompt), "interrupted") {
		t.Fatalf("recovery prompt: %+v", prompt)
	}
	if answer.State != synccore.MessageDone || textOf(answer) != "Hello there, friend." || len(partsOf(answer, synccore.PartError)) != 0 {
		t.Fatalf("answer: %s", summary(msgs))
	}
	if answer.TurnID != cut.TurnID || prompt.TurnID != cut.TurnID {
		t.Fatal("the retry left the turn")
	}
	reqs := srv.Requests()
	body := reqs[len(reqs)-1].Body["messages"].([]any)
	last := body[len(body)-1].(map[string]any)
	if c, _ := last["content"].([]any); len(c) == 0 || !strings.Contains(c[0].(map[string]any)["text"].(string), "interrupted") {
		t.Fatalf("the model did not read the recovery prompt last: %v", last)
	}
	// Visible clients never see the prompt.
	if vis := s.all(sid, false); len(vis) != 3 {
		t.Fatalf("visible history: %s", summary(vis))
	}
}

func TestKillDuringProviderStreamThenRetry(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	s, sid := killDuringProviderStream(t, srv)
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "retry"}).expect(t, http.StatusOK, nil)
	answeredAfterRetry(t, s, srv, sid)
	// Nothing left to retry: a typed conflict.
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "retry"}).expectError(t, http.StatusConflict, synccore.CodeConflict)
}

func TestResumeInterruptedAtStart(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	s, sid := killDuringProviderStream(t, srv, "-resume-interrupted")
	answeredAfterRetry(t, s, srv, sid)
}
