package pgblob_test

import (
	"context"
	"os"
	"testing"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/blob/blobtest"
	"github.com/agentsync/agentsync/server/blob/pgblob"
	"github.com/agentsync/agentsync/server/internal/pgtest"
)

var cluster *pgtest.Cluster

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &cluster)) }

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		s, err := pgblob.Open(context.Background(), cluster.Database(t), pgblob.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestSharedByNodes: two stores on one database (two nodes) see each
// other's blobs, and a release on one removes what the other put.
func TestSharedByNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := cluster.Database(t)
	var nodes [2]*pgblob.Store
	for i := range nodes {
		s, err := pgblob.Open(ctx, url, pgblob.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		nodes[i] = s
	}
	data := blobtest.Bytes(3<<20, 9)
	ref, err := nodes[0].Put(ctx, blob.Ref{SessionID: "s", Filename: "x"}, bytesReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := nodes[1].Lookup(ctx, "s", ref.BlobID); err != nil || got != ref {
		t.Fatalf("other node's Lookup = %+v, %v", got, err)
	}
	if err := nodes[1].Release(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].Open(ctx, ref.BlobID); err == nil {
		t.Fatal("blob outlived its last reference's release on the other node")
	}
}
