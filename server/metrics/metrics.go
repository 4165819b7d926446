// Package metrics counts what an agentsync server does in Prometheus
// collectors (github.com/prometheus/client_golang), for an operator to
// scrape: requests by route and status, commits by store, resyncs by
// reason, turns and model latency by model, forwards, leases, refusals,
// and the server's gauges. Only an app that imports this package links
// the Prometheus client; the server package itself links none.
//
//	m := metrics.New()
//	srv, _ := server.New(ctx, server.Config{Store: st, Observer: m})
//	m.Watch(srv)
//	go http.ListenAndServe("127.0.0.1:9090", m.Handler()) // not the public API
//
// Every metric's labels come from bounded sets (route patterns, statuses,
// store and model names, codes, outcomes); none is a session id or a
// principal. docs/server.md lists every name.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentsync/agentsync/server"
)

const ns = "agentsync"

// Latency buckets, in seconds: requests and commits are milliseconds, a
// model's first token up to tens of seconds.
var (
	fastBuckets  = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	modelBuckets = []float64{.05, .1, .25, .5, 1, 2, 4, 8, 15, 30, 60}
	rateBuckets  = []float64{1, 5, 10, 20, 40, 80, 160, 320, 640, 1280}
)

// Metrics is a server.Observer that counts into its own Prometheus
// registry, which Handler serves. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests     *prometheus.CounterVec
	requestTime  *prometheus.HistogramVec
	rateLimited  *prometheus.CounterVec
	commitTime   *prometheus.HistogramVec
	commitFails  *prometheus.CounterVec
	resyncs      *prometheus.CounterVec
	slowDrops    prometheus.Counter
	turns        *prometheus.CounterVec
	firstToken   *prometheus.HistogramVec
	tokensPerSec *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	forwards     *prometheus.CounterVec
	leases       prometheus.Counter
	takeovers    prometheus.Counter
	renewals     *prometheus.CounterVec

	// The resync codes the server uses, resolved once: Resync is called
	// with a subscriber's lock held.
	resyncSlow, resyncOwner prometheus.Counter

	codes sync.Map // int status -> string, so a request formats no number
}

var _ server.Observer = (*Metrics)(nil)

// New returns metrics on a new registry that also holds the Go runtime's
// and the process's collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	m.requests = counter("http_requests_total", "HTTP requests answered, by route pattern and status code (101: a WebSocket subscription).", "route", "code")
	m.requestTime = histogram("http_request_duration_seconds", "Time to answer an HTTP request, by route pattern (subscriptions are not counted).", fastBuckets, "route")
	m.rateLimited = counter("rate_limited_total", "Requests and subscriptions refused 429 rate_limited, by the limit passed.", "limit")
	m.commitTime = histogram("store_commit_duration_seconds", "Time of one commit (checkpoint) of a session's messages, by store.", fastBuckets, "store")
	m.commitFails = counter("store_commit_failures_total", "Commits that failed, by store.", "store")
	m.resyncs = counter("resyncs_total", "Subscribers told to re-read the snapshot, by resync code.", "reason")
	m.slowDrops = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "slow_consumer_drops_total",
		Help: "Subscribers dropped (resynced) because their queue overflowed."})
	m.reg.MustRegister(m.slowDrops)
	m.turns = counter("turns_started_total", "Turns started, by model.", "model")
	m.firstToken = histogram("model_time_to_first_token_seconds", "Time from a model step's request to its first text or reasoning delta, by model.", modelBuckets, "model")
	m.tokensPerSec = histogram("model_output_tokens_per_second", "Output tokens per second of a model step after its first delta, by model.", rateBuckets, "model")
	m.tokens = counter("model_output_tokens_total", "Output tokens of model steps streamed to their end (the provider's usage, else its deltas), by model.", "model")
	m.forwards = counter("forwards_total", "Requests forwarded between nodes, by outcome (answered, not_served, unreachable, failed; received on the answering node).", "outcome")
	m.leases = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "lease_acquisitions_total",
		Help: "Session leases this node took."})
	m.takeovers = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "takeovers_total",
		Help: "Session leases taken from a node that died or stalled with a message streaming."})
	m.reg.MustRegister(m.leases, m.takeovers)
	m.renewals = counter("lease_renewals_total", "Lease renewals, by outcome (ok, failed, lost).", "outcome")
	m.resyncSlow = m.resyncs.WithLabelValues("slow_consumer")
	m.resyncOwner = m.resyncs.WithLabelValues("owner_changed")
	return m
}

// Registry is the registry the metrics are in, for an app to add its own
// collectors or serve it with its own handler.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in Prometheus's text format (or
// OpenMetrics, when the scraper asks). Serve it on a listener of its own,
// not on the public API.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Watch adds srv's gauges (Server.Stats, read once per scrape): sessions
// loaded, turns running, subscribers, draining, and with a cluster
// transport, whether it is connected. Call it once per Metrics.
func (m *Metrics) Watch(srv *server.Server) {
	m.reg.MustRegister(&stats{srv: srv})
}

// Request implements server.Observer.
func (m *Metrics) Request(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, m.code(status)).Inc()
	if status != http.StatusSwitchingProtocols {
		m.requestTime.WithLabelValues(route).Observe(d.Seconds())
	}
}

func (m *Metrics) code(status int) string {
	if s, ok := m.codes.Load(status); ok {
		return s.(string)
	}
	s := strconv.Itoa(status)
	m.codes.Store(status, s)
	return s
}

// RateLimited implements server.Observer.
func (m *Metrics) RateLimited(limit string) { m.rateLimited.WithLabelValues(limit).Inc() }

// Commit implements server.Observer.
func (m *Metrics) Commit(store string, d time.Duration, ok bool) {
	m.commitTime.WithLabelValues(store).Observe(d.Seconds())
	if !ok {
		m.commitFails.WithLabelValues(store).Inc()
	}
}

// Resync implements server.Observer.
func (m *Metrics) Resync(code string) {
	switch code {
	case "slow_consumer":
		m.resyncSlow.Inc()
		m.slowDrops.Inc()
	case "owner_changed":
		m.resyncOwner.Inc()
	default:
		m.resyncs.WithLabelValues(code).Inc()
	}
}

// TurnStarted implements server.Observer.
func (m *Metrics) TurnStarted(model string) { m.turns.WithLabelValues(model).Inc() }

// FirstToken implements server.Observer.
func (m *Metrics) FirstToken(model string, d time.Duration) {
	m.firstToken.WithLabelValues(model).Observe(d.Seconds())
}

// Tokens implements server.Observer.
func (m *Metrics) Tokens(model string, tokens int64, d time.Duration) {
	m.tokens.WithLabelValues(model).Add(float64(tokens))
	m.tokensPerSec.WithLabelValues(model).Observe(float64(tokens) / d.Seconds())
}

// Forward implements server.Observer.
func (m *Metrics) Forward(outcome string) { m.forwards.WithLabelValues(outcome).Inc() }

// LeaseAcquired implements server.Observer.
func (m *Metrics) LeaseAcquired(takeover bool) {
	m.leases.Inc()
	if takeover {
		m.takeovers.Inc()
	}
}

// LeaseRenewal implements server.Observer.
func (m *Metrics) LeaseRenewal(outcome string) { m.renewals.WithLabelValues(outcome).Inc() }

// stats collects the gauges of Server.Stats, one call per scrape.
type stats struct{ srv *server.Server }

var (
	descLoaded      = prometheus.NewDesc(ns+"_sessions_loaded", "Sessions in memory.", nil, nil)
	descRunning     = prometheus.NewDesc(ns+"_turns_running", "Turns running.", nil, nil)
	descSubscribers = prometheus.NewDesc(ns+"_subscribers", "Open subscriptions (WebSocket and AI SDK streams).", nil, nil)
	descDraining    = prometheus.NewDesc(ns+"_draining", "1 once the server is draining (Close), else 0.", nil, nil)
	descNATS        = prometheus.NewDesc(ns+"_nats_connected", "1 while the cluster's transport (NATS) is connected, else 0; absent without one.", nil, nil)
)

func (c *stats) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLoaded, descRunning, descSubscribers, descDraining, descNATS} {
		ch <- d
	}
}

func (c *stats) Collect(ch chan<- prometheus.Metric) {
	s := c.srv.Stats()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(descLoaded, float64(s.SessionsLoaded))
	gauge(descRunning, float64(s.TurnsRunning))
	gauge(descSubscribers, float64(s.Subscribers))
	gauge(descDraining, b2f(s.Draining))
	if s.Clustered {
		gauge(descNATS, b2f(s.TransportConnected))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
