package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// pane is the built command running in a detached tmux session of a fixed
// size, on a tmux server of its own (-L: tests run in parallel).
type pane struct {
	t     *testing.T
	sock  string
	last  string
	color bool // no NO_COLOR in the program's environment
	// statusFile receives the program's exit status once it ends.
	statusFile string
}

var tmuxSeq atomic.Int64

// tmuxPath is tmux, or the test is skipped (failed on CI, which installs
// it: .ci/run).
func tmuxPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed (.ci/run installs Debian's tmux)")
		}
		t.Skip("tmux is not installed")
	}
	return p
}

// startPane runs the command with args in a width×height tmux window, with
// NO_COLOR set (capture-pane drops colours anyway).
func startPane(t *testing.T, width, height int, args ...string) *pane {
	t.Helper()
	return startPaneColor(t, width, height, false, args...)
}

// startPaneColor is startPane, without NO_COLOR when color is set.
func startPaneColor(t *testing.T, width, height int, color bool, args ...string) *pane {
	t.Helper()
	tmux := tmuxPath(t)
	bin := agentsyncBinary(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	// No status bar (the window is the pane), the pane kept
	// after the program ends (its last screen tells why).
	err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\nset -g escape-time 0\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p := &pane{t: t, sock: fmt.Sprintf("agentsync-%d-%d", os.Getpid(), tmuxSeq.Add(1)), color: color}
	quoted := []string{shellQuote(bin)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	// The shell tmux runs the line in writes the program's exit status to
	// a file: tmux's own #{pane_dead_status} is at times empty for a pane
	// that is dead (seen with several panes at once).
	p.statusFile = filepath.Join(dir, "status")
	cmdline := strings.Join(quoted, " ") + " 2>" + shellQuote(filepath.Join(dir, "stderr")) +
		"; echo $? >" + shellQuote(p.statusFile)
	p.tmux(tmux, "-f", conf, "new-session", "-d", "-s", "main", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), cmdline)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		kill := exec.CommandContext(ctx, tmux, "-L", p.sock, "kill-server")
		kill.Env = childEnv("TMUX_TMPDIR=" + tmpRoot)
		_ = kill.Run()
		b, _ := os.ReadFile(filepath.Join(dir, "stderr"))
		if strings.Contains(string(b), "DATA RACE") {
			t.Errorf("the command raced:\n%s", b)
		} else if t.Failed() && len(b) > 0 {
			t.Logf("stderr of the command:\n%s", b)
		}
	})
	return p
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// tmux runs one tmux command on the pane's server.
func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	bin := args[0]
	if !strings.HasPrefix(bin, "/") {
		bin = "tmux"
	} else {
		args = args[1:]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-L", p.sock}, args...)...)
	// The first command starts the tmux server, whose environment the
	// program inherits.
	// TMUX_TMPDIR: the sockets live in the test's temp root (TestMain
	// removes it), not in /tmp/tmux-UID.
	cmd.Env = childEnv("TERM=xterm-256color", "TMUX_TMPDIR="+tmpRoot)
	if !p.color {
		cmd.Env = append(cmd.Env, "NO_COLOR=1")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, C-c, y...).
func (p *pane) keys(keys ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

// typeText types text literally.
func (p *pane) typeText(text string) {
	p.t.Helper()
	p.tmux("send-keys", "-t", "main", "-l", text)
}

func (p *pane) capture() string {
	p.t.Helper()
	p.last = p.tmux("capture-pane", "-p", "-t", "main")
	return p.last
}

// waitFor polls the pane until cond holds, failing after timeout with the
// last screen.
func (p *pane) waitFor(what string, timeout time.Duration, cond func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := p.capture()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out after %s waiting for %s; the pane:\n%s", timeout, what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *pane) waitText(timeout time.Duration, text string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", text), timeout, func(s string) bool { return strings.Contains(s, text) })
}

// idle is the status line's hint once no turn runs.
const idle = "Enter send · Ctrl-O"

// newSession starts the UI and creates a session from the list.
func newSession(t *testing.T, s *testServer, width, height int) *pane {
	t.Helper()
	p := startPane(t, width, height, "-url", s.URL, "-token", s.Token)
	p.waitText(time.Minute, "n new")
	p.keys("n")
	p.waitFor("a live session", 30*time.Second, func(sc string) bool {
		return strings.Contains(sc, "● live") && strings.Contains(sc, idle)
	})
	return p
}

// answerRegion is the pane's text between the line of the prompt sent and
// the composer, the words joined by single spaces (the screen wraps).
func answerRegion(screen, prompt string) string {
	i := strings.LastIndex(screen, "› "+prompt)
	if i < 0 {
		return ""
	}
	rest := screen[i+len("› "+prompt):]
	if j := strings.LastIndex(rest, "\n› "); j >= 0 {
		rest = rest[:j]
	}
	return strings.Join(strings.Fields(rest), " ")
}

func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// sendPrompt types a prompt, sends it and waits for the end of its turn on
// the server and then on the pane. The pane alone cannot tell: right after
// Enter it shows the prompt under an idle status line (the run has not
// started), so the turn counts as ended on the pane only once the server's
// final text is in its answer region. It returns the pane and that reply.
func sendPrompt(t *testing.T, p *pane, s *testServer, prompt string) (string, *synccore.Message) {
	t.Helper()
	p.typeText(prompt)
	p.keys("Enter")
	p.waitText(30*time.Second, "› "+prompt)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reply := s.replyTo(ctx, t, s.onlySession(ctx, t), prompt)
	final := strip(finalText(reply))
	screen := p.waitFor("the end of the turn", time.Minute, func(sc string) bool {
		return strings.Contains(sc, idle) && strings.Contains(strip(answerRegion(sc, prompt)), final)
	})
	return screen, reply
}

// TestTmuxAnswerEqualsSnapshot: a streamed answer and a tool loop, at the
// scripted model's full speed, end on the pane as the server's snapshot
// holds them.
func TestTmuxAnswerEqualsSnapshot(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	p := newSession(t, s, 100, 40)
	screen, reply := sendPrompt(t, p, s, "scenario:text chars=600 delta=3")
	if got, want := answerRegion(screen, "scenario:text chars=600 delta=3"), words(finalText(reply)); got != want {
		t.Errorf("the pane's answer differs from the snapshot's\n pane %q\n snap %q\npane:\n%s", got, want, screen)
	}

	screen, reply = sendPrompt(t, p, s, "scenario:tools city=Lyon")
	var want []string
	for _, part := range reply.Parts {
		switch part.Type {
		case "text":
			want = append(want, part.Text)
		case "tool":
			want = append(want, fmt.Sprintf("✓ %s · %s %s", part.ToolName, part.State, compactJSON(part.Input)))
		}
	}
	if got := answerRegion(screen, "scenario:tools city=Lyon"); got != words(strings.Join(want, " ")) {
		t.Errorf("the pane's tool loop differs from the snapshot's\n pane %q\n snap %q", got, words(strings.Join(want, " ")))
	}
}

// TestTmuxApproval: the approval is answered with y on the pane.
func TestTmuxApproval(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	p := newSession(t, s, 100, 30)
	p.typeText("scenario:approval to=ops@example.com")
	p.keys("Enter")
	p.waitText(30*time.Second, "y approve · n deny")
	p.keys("y")
	screen := p.waitFor("the end of the turn", time.Minute, func(sc string) bool {
		return strings.Contains(sc, idle) && strings.Contains(sc, "✓ approved send_email")
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reply := lastReply(t, s.snapshot(ctx, t, s.onlySession(ctx, t)))
	final := finalText(reply)
	if !strings.Contains(words(screen), words(final)) {
		t.Errorf("the pane lacks the snapshot's final text %q:\n%s", final, screen)
	}
	approved := false
	for _, part := range reply.Parts {
		if part.Type == "tool" && part.ToolName == "send_email" && part.State == "output-available" {
			approved = true
		}
	}
	if !approved {
		t.Errorf("the snapshot has no send_email that ran: %+v", reply.Parts)
	}
}

// TestTmuxStopLongStream: Esc stops a long stream; the pane ends with the
// text the server kept and the stop.
func TestTmuxStopLongStream(t *testing.T) {
	t.Parallel()
	s := startServer(t, model.Speed{Delta: time.Millisecond})
	p := newSession(t, s, 100, 30)
	prompt := "scenario:long chars=400000 delta=16"
	p.typeText(prompt)
	p.keys("Enter")
	p.waitFor("the stream", 30*time.Second, func(sc string) bool {
		return strings.Contains(sc, "Esc stop") && len(answerRegion(sc, prompt)) > 200
	})
	p.keys("Escape")
	screen := p.waitFor("the end of the turn", time.Minute, func(sc string) bool { return strings.Contains(sc, idle) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reply := lastReply(t, s.snapshot(ctx, t, s.onlySession(ctx, t)))
	var text string
	stopped := false
	for _, part := range reply.Parts {
		switch part.Type {
		case synccore.PartText:
			text += part.Text
		case synccore.PartAction:
			stopped = stopped || part.ActionType == string(bindings.ActionStop)
		}
	}
	if !stopped || len([]rune(text)) >= 400000 {
		t.Fatalf("the snapshot's reply was not stopped: stop part %v, %d runes of text", stopped, len([]rune(text)))
	}
	// The pane's last lines of text end the snapshot's text (the first of
	// them may begin mid-line).
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	var tail []string
	for i := len(lines) - 1; i >= 0 && len(tail) < 6; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "●") || strings.HasPrefix(l, "›") || strings.HasPrefix(l, "■") ||
			strings.HasPrefix(l, "✗") || strings.HasPrefix(l, "Ctrl-R") {
			continue
		}
		tail = append([]string{l}, tail...)
	}
	if len(tail) < 3 || !strings.HasSuffix(words(text), words(strings.Join(tail[1:], " "))) {
		t.Errorf("the pane's last lines %q do not end the snapshot's text …%q", tail, clipText(text))
	}
	if !strings.Contains(screen, "✗ stopped") {
		t.Errorf("the pane does not show the stop:\n%s", screen)
	}
	// Ctrl-C twice quits, with status 0.
	p.keys("C-c")
	p.waitText(30*time.Second, "Ctrl-C again quits")
	p.keys("C-c")
	deadline := time.Now().Add(30 * time.Second)
	for strings.TrimSpace(p.tmux("display-message", "-p", "-t", "main", "#{pane_dead}")) != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("the program did not quit on the second Ctrl-C:\n%s", p.capture())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st, err := os.ReadFile(p.statusFile); err != nil || strings.TrimSpace(string(st)) != "0" {
		t.Errorf("exit status %q (%v) after Ctrl-C twice, want 0", st, err)
	}
}

// TestTmuxColour: in a terminal the pane holds colours, and none at all
// with NO_COLOR.
func TestTmuxColour(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	for _, color := range []bool{false, true} {
		p := startPaneColor(t, 80, 24, color, "-url", s.URL, "-token", s.Token)
		p.waitText(time.Minute, "n new")
		p.keys("n")
		p.waitText(30*time.Second, "● live")
		p.typeText("scenario:markdown")
		p.keys("Enter")
		// The status line is idle before the turn starts too: wait for the
		// answer's last words (a blockquote's lines begin with its bar).
		p.waitFor("the whole answer", time.Minute, func(sc string) bool {
			return strings.Contains(sc, idle) && strings.Contains(strings.ReplaceAll(strip(sc), "│", ""), "staysplaintext.")
		})
		styled := p.tmux("capture-pane", "-p", "-e", "-t", "main")
		// SGR colours: 30-37, 38;..., 90-97 foregrounds.
		colours := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-8]|9[0-7])[;m]`).FindAllString(styled, -1)
		if color && len(colours) == 0 {
			t.Errorf("no colour on the pane without NO_COLOR:\n%q", styled)
		}
		if !color && len(colours) > 0 {
			t.Errorf("NO_COLOR pane holds colours %q", colours[:min(len(colours), 5)])
		}
	}
}

// TestTmuxResize60: a resize to 60 columns re-wraps the answer (with wide
// characters) to the new width: the pane still holds the whole text.
func TestTmuxResize60(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	p := newSession(t, s, 100, 30)
	prompt := "echo 東京タワーと富士山の写真を見せて wide words"
	screen, reply := sendPrompt(t, p, s, prompt)
	want := strip(finalText(reply))
	if got := strip(answerRegion(screen, prompt)); got != want {
		t.Fatalf("at 100 columns the pane's answer differs:\n pane %q\n snap %q", got, want)
	}
	p.tmux("resize-window", "-t", "main", "-x", "60", "-y", "30")
	p.waitFor("the answer re-wrapped to 60 columns", 30*time.Second, func(sc string) bool {
		return strip(answerRegion(sc, prompt)) == want && strings.Contains(sc, "● live")
	})
	if w := p.tmux("display-message", "-p", "-t", "main", "#{pane_width}"); strings.TrimSpace(w) != "60" {
		t.Errorf("pane width %q after the resize, want 60", w)
	}
}

// TestTmuxReconnect: the connection is cut mid-stream (a proxy between
// the program and the server drops every connection and refuses new ones
// for a while); the status line says so, the program reconnects by itself
// and the pane ends equal to the snapshot.
func TestTmuxReconnect(t *testing.T) {
	t.Parallel()
	s := startServer(t, model.Speed{Delta: 4 * time.Millisecond})
	px := startProxy(t, strings.TrimPrefix(s.URL, "http://"))
	p := newSession(t, &testServer{URL: "http://" + px.addr, Token: s.Token}, 100, 40)
	prompt := "scenario:text chars=1500 delta=2"
	p.typeText(prompt)
	p.keys("Enter")
	p.waitFor("the stream", 30*time.Second, func(sc string) bool {
		return strings.Contains(sc, "Esc stop") && len(answerRegion(sc, prompt)) > 100
	})
	// Cut every connection and refuse new ones until the pane says so.
	px.setDown(true)
	if n := px.cut(); n == 0 {
		t.Fatal("the proxy had no connection to cut")
	}
	p.waitFor("the status line to show the lost connection", 30*time.Second, func(sc string) bool {
		return !strings.Contains(sc, "● live") && (strings.Contains(sc, "○ reconnecting") || strings.Contains(sc, "◌ connecting"))
	})
	before := px.accepted()
	px.setDown(false)
	p.waitFor("the end of the turn", time.Minute, func(sc string) bool {
		return strings.Contains(sc, idle) && strings.Contains(sc, "● live")
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := words(finalText(lastReply(t, s.snapshot(ctx, t, s.onlySession(ctx, t)))))
	screen := p.waitFor("the pane equal to the snapshot", 30*time.Second, func(sc string) bool {
		return answerRegion(sc, prompt) == want
	})
	if px.accepted() == before {
		t.Errorf("no connection through the proxy after the cut: the program never reconnected:\n%s", screen)
	}
}

// TestTmuxQuestion: a question is answered by typing on the pane.
func TestTmuxQuestion(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	p := newSession(t, s, 100, 30)
	p.typeText("scenario:question")
	p.keys("Enter")
	p.waitText(30*time.Second, "Enter replies")
	p.typeText("Lyon")
	p.keys("Enter")
	screen := p.waitFor("the end of the turn", time.Minute, func(sc string) bool {
		return strings.Contains(sc, idle) && strings.Contains(sc, "→ Lyon")
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reply := lastReply(t, s.snapshot(ctx, t, s.onlySession(ctx, t)))
	if final := finalText(reply); !strings.Contains(words(screen), words(final)) || !strings.Contains(final, "Lyon") {
		t.Errorf("the pane lacks the snapshot's final text %q (which should use the answer):\n%s", final, screen)
	}
}

// TestTmuxOlderHistory: a session of 24 messages opened with pages of 6
// shows the newest; PgUp scrolls up and loads older pages until the first
// message is on the pane.
func TestTmuxOlderHistory(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := s.api().CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := bindings.Dial(ctx, bindings.Config{BaseURL: s.URL, Token: s.Token, SessionID: sess.SessionID, Core: core.NewNativeCore()})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 12; i++ {
		sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: fmt.Sprintf("turn-%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WaitFor(ctx, func(v bindings.View) bool {
			last, ok := v.Messages.Last()
			return ok && last.Sequence > sent.Sequence && last.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	p := startPane(t, 100, 20, "-url", s.URL, "-token", s.Token, "-session", sess.SessionID, "-page", "6")
	p.waitFor("the newest turn", 30*time.Second, func(sc string) bool {
		return strings.Contains(sc, "› turn-12") && strings.Contains(sc, "● live")
	})
	if strings.Contains(p.last, "› turn-01") {
		t.Fatalf("the first turn is on the pane before any scroll:\n%s", p.last)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.capture(), "› turn-01") {
		if time.Now().After(deadline) {
			t.Fatalf("PgUp never reached the first turn; the pane:\n%s", p.last)
		}
		p.keys("PPage")
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(p.last, "End follows") {
		t.Errorf("the status line does not say the view is scrolled:\n%s", p.last)
	}
	p.keys("End")
	p.waitText(30*time.Second, "› turn-12")
}

// TestTmuxSteer: a message sent while a turn streams steers it: the server
// keeps it in the turn, and the pane shows the reply's parts written after
// reading it below it, each side equal to the snapshot.
func TestTmuxSteer(t *testing.T) {
	t.Parallel()
	s := startServer(t, model.Speed{Delta: 4 * time.Millisecond})
	p := newSession(t, s, 120, 50)
	prompt, steer := "scenario:text chars=3000 delta=2", "steer-now please"
	p.typeText(prompt)
	p.keys("Enter")
	p.waitFor("the stream", 30*time.Second, func(sc string) bool {
		return strings.Contains(sc, "Esc stop") && len(answerRegion(sc, prompt)) > 50
	})
	p.typeText(steer)
	p.keys("Enter")
	screen := p.waitFor("the end of the turn", time.Minute, func(sc string) bool {
		return strings.Contains(sc, idle) && answerRegion(sc, steer) != ""
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	msgs := s.snapshot(ctx, t, s.onlySession(ctx, t))
	var first, steered *synccore.Message
	for i := range msgs {
		if msgs[i].Role == synccore.RoleUser && msgs[i].Parts[0].Text == prompt {
			first = &msgs[i]
		}
		if msgs[i].Role == synccore.RoleUser && msgs[i].Parts[0].Text == steer {
			steered = &msgs[i]
		}
	}
	if first == nil || steered == nil || first.TurnID != steered.TurnID {
		t.Fatalf("the steer is not in the first message's turn: %+v / %+v", first, steered)
	}
	var before, after []string
	marked := false
	for _, part := range lastReply(t, msgs).Parts {
		if seq, ok := readMarker(&part); ok && seq == steered.Sequence {
			marked = true
		}
		if part.Type == synccore.PartText {
			if marked {
				after = append(after, part.Text)
			} else {
				before = append(before, part.Text)
			}
		}
	}
	if !marked || len(after) == 0 {
		t.Fatalf("the reply never read the steer (no agentsync.read marker for %d)", steered.Sequence)
	}
	above, _, _ := strings.Cut(answerRegion(screen, prompt), "› "+steer)
	if got, want := strings.TrimSpace(above), words(strings.Join(before, " ")); got != want {
		t.Errorf("above the steer the pane shows\n %q\nthe snapshot\n %q", got, want)
	}
	if got, want := answerRegion(screen, steer), words(strings.Join(after, " ")); got != want {
		t.Errorf("below the steer the pane shows\n %q\nthe snapshot\n %q", got, want)
	}
}

// TestTmuxRetry: Ctrl-R retries a turn that failed; the server's retry
// (an internal prompt to continue, then a new reply) ends on the pane as
// the snapshot holds it, under the failed turn.
func TestTmuxRetry(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	p := newSession(t, s, 100, 30)
	p.typeText("scenario:error chars=30")
	p.keys("Enter")
	p.waitFor("the failed turn", time.Minute, func(sc string) bool {
		return strings.Contains(sc, idle) && strings.Contains(sc, "Ctrl-R retries")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := s.onlySession(ctx, t)
	failed := lastReply(t, s.snapshot(ctx, t, id))
	p.keys("C-r")
	var reply *synccore.Message
	deadline := time.Now().Add(time.Minute)
	for {
		reply = lastReply(t, s.snapshot(ctx, t, id))
		if reply.Sequence > failed.Sequence && reply.Done() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the retry never answered on the server (last reply %d, the failed one %d)", reply.Sequence, failed.Sequence)
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := words(finalText(reply))
	p.waitFor("the retried turn on the pane", 30*time.Second, func(sc string) bool {
		_, after, ok := strings.Cut(sc, "Ctrl-R retries")
		if !ok {
			return false
		}
		after, _, _ = strings.Cut(after, "\n› ")
		return words(withoutActions(after)) == want && strings.Contains(sc, idle)
	})
}

// withoutActions drops the lines of action parts ("■ Retried · completed"):
// the retry records one in the reply, above its text.
func withoutActions(pane string) string {
	var keep []string
	for _, l := range strings.Split(pane, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "■ ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestTmuxRegenerateAndSwitch: Ctrl-N makes a new version of the reply
// (a fork on the server) and shows it, ‹ 2 / 2 ›, as that session's
// snapshot holds it; Alt-← goes back to the first version, ‹ 1 / 2 ›.
func TestTmuxRegenerateAndSwitch(t *testing.T) {
	t.Parallel()
	s := startServer(t, zeroSpeed)
	p := newSession(t, s, 120, 30)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first := s.onlySession(ctx, t)
	const prompt = "scenario:text chars=200 delta=5"
	screen, reply := sendPrompt(t, p, s, prompt)
	original := words(finalText(reply))
	if got := answerRegion(screen, prompt); got != original {
		t.Fatalf("the first reply on the pane %q, the snapshot %q", got, original)
	}
	p.keys("C-n")
	var regen string
	deadline := time.Now().Add(time.Minute)
	for regen == "" {
		list, err := s.api().Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ss := range list {
			if ss.SessionID != first && ss.ParentSessionID == first {
				regen = ss.SessionID
			}
		}
		if regen == "" && time.Now().After(deadline) {
			t.Fatal("Ctrl-N made no fork on the server")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var again string
	p.waitFor("the new version on the pane", time.Minute, func(sc string) bool {
		reply := lastReply(t, s.snapshot(ctx, t, regen))
		if reply == nil || !reply.Done() {
			return false
		}
		again = words(finalText(reply))
		return strings.Contains(sc, "‹ 2 / 2 ›") && answerRegion(sc, prompt) == again
	})
	if again == original {
		t.Fatalf("the regenerated reply is the original's: %q", again)
	}
	p.keys("M-Left")
	p.waitFor("the first version again", time.Minute, func(sc string) bool {
		return strings.Contains(sc, "‹ 1 / 2 ›") && answerRegion(sc, prompt) == original
	})
}
