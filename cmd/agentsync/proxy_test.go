package main

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy is a TCP proxy on loopback whose connections the test can cut.
type proxy struct {
	addr  string
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	n     int
	down  bool // refuse connections: close each one accepted
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &proxy{addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			px.mu.Lock()
			down := px.down
			px.mu.Unlock()
			if down {
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			px.mu.Lock()
			px.conns[c], px.conns[up] = true, true
			px.n++
			px.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
				px.mu.Lock()
				delete(px.conns, dst)
				delete(px.conns, src)
				px.mu.Unlock()
			}
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		px.cut()
	})
	return px
}

// cut closes every open connection and returns how many it closed.
func (px *proxy) cut() int {
	px.mu.Lock()
	defer px.mu.Unlock()
	n := len(px.conns)
	for c := range px.conns {
		c.Close()
		delete(px.conns, c)
	}
	return n
}

// setDown refuses (true) or lets through (false) new connections.
func (px *proxy) setDown(down bool) {
	px.mu.Lock()
	defer px.mu.Unlock()
	px.down = down
}

func (px *proxy) accepted() int {
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.n
}
