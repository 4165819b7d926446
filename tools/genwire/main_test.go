package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed js/index.d.ts holds exactly what genwire writes from
// package httpwire today: the TypeScript shapes of the HTTP API cannot
// drift from the Go ones the server answers with.
func TestIndexDTSIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "js", "index.d.ts")
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decls, err := declarations(filepath.Join("..", "..", "httpwire"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := splice(have, decls)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Error("js/index.d.ts differs from package httpwire: run go generate ./js")
	}
	for _, name := range []string{"export interface SessionInfo {", "title: string;", "export type ActionType = 'stop' | 'set_model' | 'set_approval_mode' | 'retry';",
		"export interface PostMessageRequest {", "response: ApprovalResponse | QuestionResponse;"} {
		if !bytes.Contains(decls, []byte(name)) {
			t.Errorf("generated declarations lack %q", name)
		}
	}
}
