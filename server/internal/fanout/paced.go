package fanout

import (
	"sync"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// paced is what a hub with a Pacer holds back: the frames published since
// its last delivery, a stream's deltas folded as a subscriber folds them
// (one delta per FoldLimit bytes), and the timer that delivers them.
type paced struct {
	mu      sync.Mutex
	pending []synccore.Frame
	fold    []byte // the last pending delta's text once another folded into it
	folding bool   // the last pending frame is a delta others may fold into
	last    time.Time
	timer   *time.Timer
	armed   bool
}

// publishPaced delivers frames at once if the hub's last delivery is an
// interval old, and otherwise holds them until it is.
func (h *Hub) publishPaced(frames []synccore.Frame) {
	p := &h.paced
	p.mu.Lock()
	defer p.mu.Unlock()
	iv := h.limits.Pacer.Interval()
	if len(p.pending) == 0 {
		if iv == 0 {
			h.deliver(frames)
			return
		}
		now := time.Now()
		if wait := p.last.Add(iv).Sub(now); wait > 0 {
			p.push(frames, h.limits.Fold)
			p.arm(wait, h.flush)
			return
		}
		p.last = now
		h.deliver(frames)
		return
	}
	p.push(frames, h.limits.Fold)
	if iv == 0 { // the subscribers left: no reason to wait
		h.flushLocked()
	}
}

// flush is the timer's: it delivers what is held back.
func (h *Hub) flush() {
	h.paced.mu.Lock()
	defer h.paced.mu.Unlock()
	h.paced.armed = false
	h.flushLocked()
}

// flushLocked delivers what is held back now; h.paced.mu is held.
func (h *Hub) flushLocked() {
	p := &h.paced
	if len(p.pending) == 0 {
		return
	}
	p.closeFold()
	p.last = time.Now()
	h.deliver(p.pending) // subscribers copy the frames: the slice is reused
	p.drop()
}

// push appends frames, folding a delta into the pending delta it
// continues, up to fold bytes (never with fold < 0).
func (p *paced) push(frames []synccore.Frame, fold int) {
	for _, f := range frames {
		if p.folds(&f, fold) {
			if len(p.fold) == 0 {
				p.fold = append(p.fold, p.pending[len(p.pending)-1].Text...)
			}
			p.fold = append(p.fold, f.Text...)
			continue
		}
		p.closeFold()
		p.pending = append(p.pending, f)
		p.folding = f.Kind == synccore.FrameDelta
	}
}

// folds reports whether delta f continues the pending delta at the end
// and fits in it (Subscriber.folds, for what a hub holds).
func (p *paced) folds(f *synccore.Frame, fold int) bool {
	if !p.folding || f.Kind != synccore.FrameDelta || fold < 0 {
		return false
	}
	return continues(&p.pending[len(p.pending)-1], len(p.fold), f, fold)
}

// closeFold gives the folded delta at the end its text.
func (p *paced) closeFold() {
	if p.folding && len(p.fold) > 0 {
		p.pending[len(p.pending)-1].Text = string(p.fold)
	}
	p.folding = false
	p.fold = p.fold[:0]
	if cap(p.fold) > keptBytes {
		p.fold = nil
	}
}

// drop forgets what is held back (delivered, or made moot by a resync).
func (p *paced) drop() {
	p.folding = false
	p.fold = p.fold[:0]
	clear(p.pending)
	p.pending = p.pending[:0]
	if cap(p.pending) > keptFrames {
		p.pending = nil
	}
}

func (p *paced) arm(wait time.Duration, f func()) {
	if p.armed {
		return
	}
	p.armed = true
	if p.timer == nil {
		p.timer = time.AfterFunc(wait, f)
		return
	}
	p.timer.Reset(wait)
}

func (p *paced) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
	p.armed = false
}
