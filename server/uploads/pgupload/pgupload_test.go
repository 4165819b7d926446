package pgupload_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/blob/pgblob"
	"github.com/agentsync/agentsync/server/internal/pgtest"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/postgres"
	"github.com/agentsync/agentsync/server/uploads"
	"github.com/agentsync/agentsync/server/uploads/pgupload"
	tusd "github.com/tus/tusd/v2/pkg/handler"
)

var cluster *pgtest.Cluster

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &cluster)) }

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var byToken = auth.Func(func(r *http.Request, token string) (string, error) {
	if token == "" {
		return "", auth.ErrUnauthorized
	}
	return token, nil
})

// node serves one server on loopback over the shared database: its own
// pools of the PostgreSQL store, blob store and upload store, as a node
// of a cluster has.
func node(t *testing.T, url string) (addr string, blobs *pgblob.Store) {
	t.Helper()
	ctx := ctxOf(t)
	st, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err = pgblob.Open(ctx, url, pgblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ups, err := pgupload.Open(ctx, url, 0)
	if err != nil {
		t.Fatal(err)
	}
	up, err := uploads.New(uploads.Config{Blobs: blobs, Store: ups, MediaTypes: []string{"application/octet-stream"}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, server.Config{Store: st, Authorizer: byToken, Attachments: &server.Attachments{Blobs: blobs, Uploads: up}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(cctx)
		hs.CloseClientConnections()
		hs.Close()
		ups.Close()
		_ = blobs.Close()
		_ = st.Close()
	})
	return strings.TrimPrefix(hs.URL, "http://"), blobs
}

// roundRobin is a TCP load balancer: each connection goes to the next
// node, and the first connection that carries more than cut bytes to its
// node is cut there (a flaky network mid-PATCH).
type roundRobin struct {
	ln      net.Listener
	nodes   []string
	next    atomic.Int64
	cut     int64
	cutOnce sync.Once
	cuts    atomic.Int32
	byNode  []atomic.Int32 // connections each node got
}

func newRoundRobin(t *testing.T, cut int64, nodes ...string) *roundRobin {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rr := &roundRobin{ln: ln, nodes: nodes, cut: cut, byNode: make([]atomic.Int32, len(nodes))}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			i := int(rr.next.Add(1)-1) % len(nodes)
			rr.byNode[i].Add(1)
			go rr.carry(c, nodes[i])
		}
	}()
	return rr
}

func (rr *roundRobin) carry(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { _, _ = io.Copy(c, s); c.Close() }()
	buf := make([]byte, 32<<10)
	var carried int64
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if carried+int64(n) > rr.cut {
				cutNow := false
				rr.cutOnce.Do(func() { cutNow = true })
				if cutNow {
					rr.cuts.Add(1)
					return
				}
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
			carried += int64(n)
		}
		if err != nil {
			return
		}
	}
}

func data(n int) []byte {
	b := make([]byte, n)
	x := uint32(11)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// An upload behind a round-robin balancer over two nodes, with no sticky
// sessions: created on one node, cut mid-PATCH, resumed through the
// others; every request goes to a new connection, so to the other node
// than the one before. The file is whole, on the shared blob store, and
// nothing of the upload is left.
func TestUploadAcrossNodes(t *testing.T) {
	t.Parallel()
	url := cluster.Database(t)
	a, blobs := node(t, url)
	b, _ := node(t, url)
	st, err := postgres.Open(ctxOf(t), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(ctxOf(t), store.Session{SessionID: "s1", Model: "scripted", ApprovalMode: "ask", Owner: "alice"}); err != nil {
		t.Fatal(err)
	}
	const size = 5 << 20
	file := data(size)
	rr := newRoundRobin(t, 2<<20, a, b)
	alice := &bindings.API{BaseURL: "http://" + rr.ln.Addr().String(), Token: "alice",
		HTTPClient: &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}}
	done, err := alice.Upload(ctxOf(t), "s1", bindings.UploadFile{Name: "big.bin", MediaType: "application/octet-stream", Body: bytes.NewReader(file), Size: size})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if rr.cuts.Load() != 1 || rr.byNode[0].Load() == 0 || rr.byNode[1].Load() == 0 {
		t.Fatalf("cuts %d, connections per node %d/%d: want one cut and both nodes used", rr.cuts.Load(), rr.byNode[0].Load(), rr.byNode[1].Load())
	}
	sum := sha256.Sum256(file)
	if done.BlobID != hex.EncodeToString(sum[:]) || done.Size != size {
		t.Fatalf("file %+v, want blob %x", done, sum)
	}
	r, err := blobs.Open(ctxOf(t), done.BlobID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, file) {
		t.Fatalf("stored blob: %d bytes, equal %v, err %v", len(got), bytes.Equal(got, file), err)
	}
	ups, err := pgupload.Open(ctxOf(t), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ups.Close()
	if left, err := ups.Stale(ctxOf(t), 0); err != nil || len(left) != 0 {
		t.Fatalf("uploads left: %v, %v", left, err)
	}
}

// The store on its own: bytes written in pieces read back whole, the
// offset counts only what is stored, a write at a wrong offset is
// refused, Stale and Terminate.
func TestStoreWritesAndReads(t *testing.T) {
	t.Parallel()
	ctx := ctxOf(t)
	s, err := pgupload.Open(ctx, cluster.Database(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	file := data(pgupload.ChunkSize*2 + 12345)
	up, err := s.NewUpload(ctx, tusd.FileInfo{Size: int64(len(file)), MetaData: tusd.MetaData{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := up.GetInfo(ctx)
	split := int64(pgupload.ChunkSize + 7)
	if n, err := up.WriteChunk(ctx, 0, bytes.NewReader(file[:split])); err != nil || n != split {
		t.Fatalf("first write: %d, %v", n, err)
	}
	if _, err := up.WriteChunk(ctx, 5, bytes.NewReader([]byte("x"))); err == nil {
		t.Fatal("a write at a wrong offset was taken")
	}
	again, err := s.GetUpload(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := again.GetInfo(ctx); got.Offset != split || got.MetaData["k"] != "v" {
		t.Fatalf("info after the first write: %+v", got)
	}
	if n, err := again.WriteChunk(ctx, split, bytes.NewReader(file[split:])); err != nil || n != int64(len(file))-split {
		t.Fatalf("second write: %d, %v", n, err)
	}
	rd, err := again.GetReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd)
	if err != nil || !bytes.Equal(got, file) {
		t.Fatalf("read back %d bytes (equal %v), %v", len(got), bytes.Equal(got, file), err)
	}
	if stale, err := s.Stale(ctx, time.Hour); err != nil || len(stale) != 0 {
		t.Fatalf("Stale(1h) = %v, %v", stale, err)
	}
	if stale, err := s.Stale(ctx, 0); err != nil || len(stale) != 1 || stale[0] != info.ID {
		t.Fatalf("Stale(0) = %v, %v", stale, err)
	}
	if err := s.AsTerminatableUpload(again).Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUpload(ctx, info.ID); !errors.Is(err, tusd.ErrNotFound) {
		t.Fatalf("a terminated upload: %v, want ErrNotFound", err)
	}
}

// One upload's lock across two stores (two nodes): the second waits, and
// its waiting asks the holder to let go; released, the second holds it.
// A lock wait that times out is tusd.ErrLockTimeout.
func TestLockAcrossNodes(t *testing.T) {
	t.Parallel()
	url := cluster.Database(t)
	n1, err := pgupload.Open(ctxOf(t), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer n1.Close()
	n2, err := pgupload.Open(ctxOf(t), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	l1, _ := n1.NewLock("up1")
	asked := make(chan struct{})
	var once sync.Once
	if err := l1.Lock(ctxOf(t), func() { once.Do(func() { close(asked) }) }); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctxOf(t), 300*time.Millisecond)
	defer cancel()
	lt, _ := n2.NewLock("up1")
	if err := lt.Lock(short, func() {}); !errors.Is(err, tusd.ErrLockTimeout) {
		t.Fatalf("a wait that times out: %v, want ErrLockTimeout", err)
	}
	// Another upload's lock is free meanwhile.
	other, _ := n2.NewLock("up2")
	if err := other.Lock(ctxOf(t), func() {}); err != nil {
		t.Fatal(err)
	}
	_ = other.Unlock()
	l2, _ := n2.NewLock("up1")
	got := make(chan error, 1)
	go func() { got <- l2.Lock(ctxOf(t), func() {}) }()
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the holder was never asked to let go")
	}
	select {
	case err := <-got:
		t.Fatalf("the second lock was granted while held: %v", err)
	default:
	}
	if err := l1.Unlock(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second lock was not granted after the release")
	}
	_ = l2.Unlock()
}
