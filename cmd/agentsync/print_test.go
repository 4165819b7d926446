package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/model"
)

// runPrint runs the built command with -p and returns stdout, stderr and
// the exit status.
func runPrint(t *testing.T, s *testServer, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	return runPrintIn(t, s, "", args...)
}

// runPrintIn is runPrint with stdin.
func runPrintIn(t *testing.T, s *testServer, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentsyncBinary(t), append([]string{"-url", s.URL, "-token", s.Token}, args...)...)
	cmd.Env = childEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if strings.Contains(errb.String(), "DATA RACE") {
		t.Errorf("the command raced:\n%s", errb.String())
	}
	status = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run %v: %v", args, err)
		}
		status = ee.ExitCode()
	}
	return out.String(), errb.String(), status
}

// TestPrintMode: -p prints exactly the final text of the server's snapshot
// of the turn, on stdout alone, with status 0, for plain text, a tool loop,
// markdown and an approval approved by -yes, on either core.
func TestPrintMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
	}{
		{"text", []string{"-p", "scenario:text chars=300"}},
		{"text-native", []string{"-core", "native", "-p", "scenario:text chars=300"}},
		{"tools", []string{"-p", "scenario:tools city=Tokyo"}},
		{"markdown", []string{"-p", "scenario:markdown"}},
		{"echo", []string{"-p", "hello 世界"}},
		{"approval-yes", []string{"-yes", "-p", "scenario:approval"}},
		{"long", []string{"-p", "scenario:long chars=200000 delta=64"}},
		{"stdin", []string{"-p", "-"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, model.Speed{})
			stdout, stderr, status := runPrintIn(t, s, "scenario:tools city=Oslo\n", tc.args...)
			if status != 0 {
				t.Fatalf("exit status %d, stderr:\n%s", status, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr not empty: %q", stderr)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			reply := lastReply(t, s.snapshot(ctx, t, s.onlySession(ctx, t)))
			want := withNewline(finalText(reply))
			if strings.TrimSpace(want) == "" {
				t.Fatalf("the snapshot's reply has no text: %+v", reply)
			}
			if tc.name == "stdin" && !strings.Contains(stdout, "Oslo") {
				t.Errorf("-p - did not take the prompt from stdin: %q", stdout)
			}
			if stdout != want {
				t.Errorf("stdout (%d bytes) is not the snapshot's final text (%d bytes):\n got %q\nwant %q", len(stdout), len(want), clipText(stdout), clipText(want))
			}
		})
	}
}

// TestPrintModeFailures: a turn that fails, an approval without -yes, a
// question, a wrong token and a server that is not there exit non-zero
// with a message on stderr and nothing on stdout.
func TestPrintModeFailures(t *testing.T) {
	t.Parallel()
	s := startServer(t, model.Speed{})
	cases := []struct {
		name    string
		s       *testServer
		args    []string
		wantErr string
	}{
		{"error", s, []string{"-p", "scenario:error chars=30"}, "the turn failed"},
		{"approval", s, []string{"-p", "scenario:approval"}, "approve send_email"},
		{"question", s, []string{"-yes", "-p", "scenario:question"}, "asks a question"},
		{"token", &testServer{URL: s.URL, Token: "wrong"}, []string{"-p", "hello"}, "unauthorized"},
		{"down", &testServer{URL: "http://127.0.0.1:1", Token: "x"}, []string{"-p", "hello"}, "create a session"},
		{"flags", s, []string{"-core", "nope", "-p", "x"}, "-core is wasm or native"},
		{"empty-stdin", s, []string{"-p", "-"}, "stdin held no prompt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, status := runPrint(t, tc.s, tc.args...)
			if status == 0 {
				t.Errorf("exit status 0, want non-zero")
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.wantErr)
			}
		})
	}
}

func clipText(s string) string {
	if len(s) > 200 {
		return s[:100] + "…" + s[len(s)-100:]
	}
	return s
}
