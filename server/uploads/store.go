package uploads

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tus/tusd/v2/pkg/filestore"
	tusd "github.com/tus/tusd/v2/pkg/handler"
	"github.com/tus/tusd/v2/pkg/memorylocker"
)

// Store keeps the uploads in progress: a tusd data store that can
// terminate uploads and lock them, and list the abandoned ones for Sweep.
// DirStore keeps them in files on one node; pgupload.Store in PostgreSQL,
// where every node of a cluster serves every upload.
type Store interface {
	tusd.DataStore
	tusd.TerminaterDataStore
	// Locker serializes the requests of one upload: in this process for
	// a DirStore, across the nodes for a shared store.
	tusd.Locker
	// Stale lists the uploads whose bytes have not grown for olderThan.
	Stale(ctx context.Context, olderThan time.Duration) ([]string, error)
}

// DirStore keeps uploads in progress as files under a directory of this
// node (tusd's filestore), locked in this process.
type DirStore struct {
	filestore.FileStore
	*memorylocker.MemoryLocker
	dir string
}

// NewDirStore keeps uploads under dir, created if needed.
func NewDirStore(dir string) (*DirStore, error) {
	if err := mkdir(dir); err != nil {
		return nil, err
	}
	return &DirStore{FileStore: filestore.New(dir), MemoryLocker: memorylocker.New(), dir: dir}, nil
}

// Stale lists the uploads whose data file (or, before any byte, info
// file) was last written before olderThan ago.
func (d *DirStore) Stale(ctx context.Context, olderThan time.Duration) ([]string, error) {
	infos, err := filepath.Glob(filepath.Join(d.dir, "*.info"))
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-olderThan)
	var ids []string
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			return ids, err
		}
		id := strings.TrimSuffix(filepath.Base(info), ".info")
		if !uploadID.MatchString(id) {
			continue
		}
		last, err := os.Stat(filepath.Join(d.dir, id))
		if err != nil {
			if last, err = os.Stat(info); err != nil {
				continue
			}
		}
		if last.ModTime().Before(cutoff) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
