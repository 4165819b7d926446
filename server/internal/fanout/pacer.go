package fanout

import (
	"sync/atomic"
	"time"
)

// Pacer paces the deliveries of every hub that shares it (one per node):
// a hub delivers what is published at once when the last delivery is at
// least Interval old, and otherwise holds it, deltas folded, until then.
// With thousands of viewers the cost of a delivery is one WebSocket write
// per viewer (~7 µs of CPU, half of it in the kernel), so the number of
// deliveries per second, not the frames, bounds what a node holds: paced,
// a viewer gets one write per interval whatever the model's pace, and all
// the viewers of a session are written the same batch at the same moment
// (their spread is the time to write them all, not how far behind each
// writer fell). A pacer with a fixed interval holds every hub to it; an
// automatic one scales it with the node's subscribers, so a node with a
// few delivers every batch at once (docs/server.md "Many viewers").
type Pacer struct {
	subs  atomic.Int64
	fixed time.Duration // > 0: always this; 0: automatic; < 0: never paced
}

// WritesPerSecond is what an automatic Pacer holds a node's subscribers
// to together: the interval is subscribers / WritesPerSecond (200 ms at
// 10,000 subscribers, 20 ms at 1,000), none when that is under MinInterval.
// About a third of a core at ~7 µs a write. BenchmarkManyViewers chose it:
// at 100,000 a second 10,000 viewers of 10 or 100 sessions took 1.7-1.8x
// as long as one viewer (the writes starve the sessions and the readers on
// 2 cores), at 50,000 1.1-1.5x.
const WritesPerSecond = 50_000

// MinInterval and MaxInterval bound an automatic Pacer's interval: under
// MinInterval (fewer than 100 subscribers) every batch is delivered at
// once; no viewer waits more than MaxInterval for a delta.
const (
	MinInterval = 2 * time.Millisecond
	MaxInterval = 250 * time.Millisecond
)

// NewPacer returns a pacer holding hubs to interval: positive, that
// interval; 0, automatic (WritesPerSecond); negative, none (every batch
// delivered at once, as with no pacer).
func NewPacer(interval time.Duration) *Pacer { return &Pacer{fixed: interval} }

// Interval is the least time between two deliveries of a hub now.
func (p *Pacer) Interval() time.Duration {
	if p == nil || p.fixed < 0 {
		return 0
	}
	if p.fixed > 0 {
		return p.fixed
	}
	iv := time.Duration(p.subs.Load()) * time.Second / WritesPerSecond
	if iv < MinInterval {
		return 0
	}
	return min(iv, MaxInterval)
}

// Subscribers is the number of subscribers of the hubs sharing p.
func (p *Pacer) Subscribers() int64 {
	if p == nil {
		return 0
	}
	return p.subs.Load()
}

func (p *Pacer) add(n int) {
	if p != nil {
		p.subs.Add(int64(n))
	}
}
