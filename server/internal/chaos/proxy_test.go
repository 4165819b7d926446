package chaos

import (
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// proxy is a TCP proxy on loopback, as the network between two programs:
// a load balancer over nodes (a random backend that is up, per
// connection), or one node's link to NATS. It cuts connections (both ends
// see a reset, as after a network failure) and refuses everything for a
// while (a partition).
type proxy struct {
	ln net.Listener

	mu          sync.Mutex
	backends    []string        // host:port
	down        map[string]bool // backends a health check would have removed
	conns       map[net.Conn]net.Conn
	refuseUntil time.Time
	rng         *rand.Rand
}

func newProxy(t *testing.T, seed uint64, backends ...string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, backends: backends, down: map[string]bool{}, conns: map[net.Conn]net.Conn{},
		rng: rand.New(rand.NewPCG(seed, 11))}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.carry(c)
	}
}

// carry connects c to a backend and copies both ways until either side
// ends, then closes both.
func (p *proxy) carry(c net.Conn) {
	b := p.dial()
	if b == nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c] = b
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
	p.drop(c)
}

// dial opens a connection to a random backend that is up, trying the
// others when it refuses; nil when refusing or none answers.
func (p *proxy) dial() net.Conn {
	p.mu.Lock()
	if time.Now().Before(p.refuseUntil) {
		p.mu.Unlock()
		return nil
	}
	var up []string
	for _, b := range p.backends {
		if !p.down[b] {
			up = append(up, b)
		}
	}
	p.rng.Shuffle(len(up), func(i, j int) { up[i], up[j] = up[j], up[i] })
	p.mu.Unlock()
	for _, b := range up {
		if c, err := net.DialTimeout("tcp", b, 2*time.Second); err == nil {
			return c
		}
	}
	return nil
}

func (p *proxy) drop(c net.Conn) {
	p.mu.Lock()
	b, ok := p.conns[c]
	delete(p.conns, c)
	p.mu.Unlock()
	if ok {
		reset(c)
		reset(b)
	}
}

// reset closes a TCP connection with a RST rather than a FIN: the peer
// sees the connection fail, not end.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// markDown takes a backend out of the rotation, as a load balancer's
// health check does with a node that died.
func (p *proxy) markDown(backend string) {
	p.mu.Lock()
	p.down[backend] = true
	p.mu.Unlock()
}

// cutOne cuts one connection at random.
func (p *proxy) cutOne() {
	p.mu.Lock()
	var victim net.Conn
	n := 0
	for c := range p.conns {
		n++
		if p.rng.IntN(n) == 0 { // reservoir sampling: map order is not random enough
			victim = c
		}
	}
	p.mu.Unlock()
	if victim != nil {
		p.drop(victim)
	}
}

// partition cuts every connection and refuses new ones for d.
func (p *proxy) partition(d time.Duration) {
	p.mu.Lock()
	p.refuseUntil = time.Now().Add(d)
	all := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		all = append(all, c)
	}
	p.mu.Unlock()
	for _, c := range all {
		p.drop(c)
	}
}

// cutEvery cuts one connection at random times about every apart until
// stop is closed.
func (p *proxy) cutEvery(stop <-chan struct{}, every time.Duration) {
	go func() {
		for {
			p.mu.Lock()
			wait := time.Duration(p.rng.Int64N(int64(2 * every)))
			p.mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(wait):
				p.cutOne()
			}
		}
	}()
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.partition(time.Hour)
}
