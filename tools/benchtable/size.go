package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
)

// moduleSizes measures the committed WebAssembly module: raw, gzip -9, and
// brotli -q 11 when the brotli command is installed (no Go brotli library is
// among the project's dependencies).
func moduleSizes(path string) ([]result, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("module size: %w", err)
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(raw)
	w.Close()
	m := map[string]float64{"raw-bytes": float64(len(raw)), "gzip-bytes": float64(gz.Len())}
	if out, err := exec.Command("brotli", "-c", "-q", "11", path).Output(); err == nil {
		m["brotli-bytes"] = float64(len(out))
	}
	return []result{{Name: "module.Size", Metrics: m, Runs: 1}}, nil
}
