package blob_test

import (
	"testing"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/blob/blobtest"
)

func TestDirConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		d, err := blob.OpenDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	})
}
