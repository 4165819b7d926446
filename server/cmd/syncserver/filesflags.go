package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/blob/pgblob"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/uploads"
	"github.com/agentsync/agentsync/server/uploads/pgupload"
)

// filesOptions choose where files go (docs/files.md): a directory beside
// the SQLite file (the default), the -store PostgreSQL database, or off.
type filesOptions struct {
	mode       string
	dir        string
	uploadsDir string
	maxSize    int64
	types      string
	keyFile    string
	expire     time.Duration
	modelBytes int64
	writeMax   int64
}

func (o *filesOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.mode, "files", "", "where uploaded files are kept: dir (a directory, see -files-dir), postgres (the -store database: several nodes), or off (no file routes); default: postgres with -store postgres://..., else dir")
	fs.StringVar(&o.dir, "files-dir", "", "with -files dir: the blob directory (default: files/ beside the -db file)")
	fs.StringVar(&o.uploadsDir, "uploads-dir", "", "with -files dir: uploads in progress (default: uploads/ beside the -db file); with -files postgres they are in the -store database, so any node serves any upload")
	fs.Int64Var(&o.maxSize, "files-max-size", uploads.DefaultMaxSize, "largest upload in bytes")
	fs.StringVar(&o.types, "files-types", strings.Join(uploads.DefaultMediaTypes, ","), "comma list of accepted media types (type/subtype or type/*)")
	fs.DurationVar(&o.expire, "uploads-expire", 24*time.Hour, "drop an upload in progress whose bytes have not grown for this long (0: never)")
	fs.Int64Var(&o.modelBytes, "files-model-budget", 10<<20, "bytes of files one model request may carry (images, PDFs, text files of the user messages, newest first; a file past it becomes a note); negative: none")
	fs.Int64Var(&o.writeMax, "files-write-max", 10<<20, "largest file the model may write with the write_file tool, in bytes; negative: no write_file tool")
	fs.StringVar(&o.keyFile, "files-key-file", "", "a file whose bytes sign the short-lived file URLs (the nodes of a cluster need the same one; default: a random key per process)")
}

// open returns the server's Attachments and what closes them after the
// server (nil, nil with -files off).
func (o *filesOptions) open(ctx context.Context, db string, so storeOptions, st store.Store, log *slog.Logger) (*server.Attachments, func(), error) {
	if o.maxSize <= 0 {
		return nil, nil, fmt.Errorf("-files-max-size must be positive, got %d", o.maxSize)
	}
	base := filepath.Dir(db)
	var blobs blob.Store
	var inProgress uploads.Store // nil: a directory (-uploads-dir)
	closeInProgress := func() {}
	if o.mode == "" {
		o.mode = "dir"
		if so.url != "" {
			o.mode = "postgres"
		}
	}
	switch o.mode {
	case "off":
		return nil, nil, nil
	case "dir":
		if so.node != "" {
			return nil, nil, fmt.Errorf("-files dir with -node: every node would keep its own files; use -files postgres")
		}
		dir := o.dir
		if dir == "" {
			dir = filepath.Join(base, "files")
		}
		d, err := blob.OpenDir(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("-files dir: %w", err)
		}
		blobs = d
	case "postgres":
		if so.url == "" {
			return nil, nil, errors.New("-files postgres needs a -store postgres:// URL")
		}
		s, err := pgblob.Open(ctx, so.url, pgblob.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("-files postgres: %w", err)
		}
		pu, err := pgupload.Open(ctx, so.url, 0)
		if err != nil {
			_ = s.Close()
			return nil, nil, fmt.Errorf("-files postgres: %w", err)
		}
		blobs, inProgress, closeInProgress = s, pu, pu.Close
	default:
		return nil, nil, fmt.Errorf("-files: want dir, postgres or off, got %q", o.mode)
	}
	at := &server.Attachments{Blobs: blobs, ModelFileBudget: o.modelBytes, WriteFileMax: o.writeMax}
	if o.modelBytes == 0 {
		at.ModelFileBudget = -1 // 0 on the command line: none, not the default
	}
	closeAll := func() {
		closeInProgress()
		if err := blobs.Close(); err != nil {
			log.Error("close blob store", "err", err)
		}
	}
	if o.keyFile != "" {
		key, err := os.ReadFile(o.keyFile)
		if err != nil || len(key) < 16 {
			closeAll()
			return nil, nil, fmt.Errorf("-files-key-file: want a readable file of at least 16 bytes (%v)", err)
		}
		at.SigningKey = key
	}
	var types []string
	for _, t := range strings.Split(o.types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	upDir := o.uploadsDir
	if upDir == "" {
		upDir = filepath.Join(base, "uploads")
	}
	up, err := uploads.New(uploads.Config{Blobs: blobs, Store: inProgress, Dir: upDir, MaxSize: o.maxSize, MediaTypes: types, Logger: log})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	at.Uploads = up
	if o.expire > 0 {
		go up.SweepEvery(ctx, min(o.expire/4, time.Hour), o.expire)
	}
	return at, closeAll, nil
}
