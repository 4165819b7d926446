package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodecIsFresh regenerates synccore's codec with the flags of
// its go:generate line and fails if the committed file differs: a field
// added to a type without `go generate ./synccore` is caught here.
func TestGeneratedCodecIsFresh(t *testing.T) {
	dir := filepath.Join("..", "..", "synccore")
	args := generateArgs(t, filepath.Join(dir, "codec.go"))
	fs := flag.NewFlagSet("gencodec", flag.ContinueOnError)
	out := fs.String("o", "", "")
	types := fs.String("types", "", "")
	canon := fs.String("canon", "", "")
	fs.String("dir", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatalf("go:generate flags %q: %v", args, err)
	}
	want, err := generate(dir, *out, split(*types), split(*canon))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, *out))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("synccore/%s is stale: run `go generate ./synccore`", *out)
	}
}

// generateArgs returns the flags of the gencodec go:generate line in file.
func generateArgs(t *testing.T, file string) []string {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "//go:generate go run ../tools/gencodec "
	for line := range strings.SplitSeq(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("%s has no %q line", file, prefix)
	return nil
}

// TestUnsupportedFieldIsRefused: a field type the generator cannot write
// is an error naming the field, not silently skipped.
func TestUnsupportedFieldIsRefused(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\ntype T struct {\n\tM map[string]int `msgpack:\"m\"`\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "t.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := generate(dir, "gen.go", []string{"T"}, nil)
	if err == nil || !strings.Contains(err.Error(), "T.M") {
		t.Fatalf("want an error naming T.M, got %v", err)
	}
}
