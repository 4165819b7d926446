// Command gencodec writes synccore's msgpack codec from the Go types: for
// every struct reachable from the root types, an encoder (appendT), a
// decoder ((*decoder).decodeT), its field names (fieldsT, the array form)
// and its keys with their msgpack headers (keyTField); and for the digest
// roots, the canonical encoder (appendCanonT). Each field is written the
// way its msgpack struct tag says, so a field added to a type reaches the
// wire, the decoder and the digest by running `go generate ./synccore`.
//
// A codec:"shared" tag option makes the decoder intern the field's values
// across a page (msgp.Decoder.SharedString): for ids and names that repeat
// in every message. A list field []T is decoded by (*decoder).listT, which
// is generated unless synccore writes its own (for an allocation policy,
// such as the part slab of a page).
//
// Usage (see synccore/codec.go's go:generate line):
//
//	gencodec -dir synccore -o codec_gen.go -types Event,Frame,... -canon Message
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	dir := flag.String("dir", ".", "the package directory")
	out := flag.String("o", "codec_gen.go", "the output file, in dir")
	types := flag.String("types", "", "comma-separated root types: their codec and that of every struct they hold")
	canon := flag.String("canon", "", "comma-separated root types of the digest's canonical encoding")
	flag.Parse()
	src, err := generate(*dir, *out, split(*types), split(*canon))
	if err != nil {
		log.Fatalf("gencodec: %v", err)
	}
	if err := os.WriteFile(filepath.Join(*dir, *out), src, 0o644); err != nil {
		log.Fatalf("gencodec: %v", err)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// generate parses the package in dir (without the output file, which it
// replaces, and without tests) and returns the formatted codec source.
func generate(dir, out string, roots, canonRoots []string) ([]byte, error) {
	pkg, err := parsePackage(dir, out)
	if err != nil {
		return nil, err
	}
	wire, err := pkg.closure(roots)
	if err != nil {
		return nil, fmt.Errorf("types: %w", err)
	}
	canon, err := pkg.closure(canonRoots)
	if err != nil {
		return nil, fmt.Errorf("canon: %w", err)
	}
	return emit(pkg, wire, canon)
}
