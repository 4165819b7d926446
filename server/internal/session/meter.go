package session

import (
	"context"
	"time"

	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/model"
)

// stepMeter measures one model step for the observer: the time to its
// first text or reasoning delta, and its output tokens per second after
// it (the provider's usage when it reports one, else its deltas). It does
// no work per delta beyond a comparison and a count.
type stepMeter struct {
	obs    obs.Observer
	model  string
	began  time.Time
	first  time.Time // the first delta's arrival; zero before it
	deltas int64
	usage  int64 // output tokens the provider reported; -1: none
}

func (m *stepMeter) see(ev *model.Event) {
	switch ev.Type {
	case model.EvTextDelta, model.EvReasoningDelta:
		if m.first.IsZero() {
			m.first = time.Now()
			m.obs.FirstToken(m.model, m.first.Sub(m.began))
		}
		m.deltas++
	case model.EvData:
		if ev.DataType != model.DataUsage {
			return
		}
		if u, ok := ev.Data.(map[string]any); ok {
			if n, ok := tokenCount(u["output_tokens"]); ok {
				m.usage = n
			}
		}
	}
}

// done reports the step's throughput once it streamed to its end.
func (m *stepMeter) done() {
	if m.first.IsZero() {
		return
	}
	n := m.deltas
	if m.usage >= 0 {
		n = m.usage
	}
	if d := time.Since(m.first); n > 0 && d > 0 {
		m.obs.Tokens(m.model, n, d)
	}
}

func tokenCount(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// startSpan starts a span under ctx's with the manager's Tracer; without
// one it returns ctx and a nil span.
func (m *Manager) startSpan(ctx context.Context, name string) (context.Context, obs.Span) {
	if m.tracer == nil {
		return ctx, nil
	}
	return m.tracer.Start(ctx, name)
}
