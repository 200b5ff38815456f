package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agent-mcp/agent-mcp/orchestrator"
	"github.com/agent-mcp/agent-mcp/permissions"
	"github.com/agent-mcp/agent-mcp/tools"
)

// MetricsNamespace prefixes every series the server exports.
const MetricsNamespace = "agent_mcp"

// Metrics are the server's Prometheus series, in a registry of their own
// (nothing is registered globally): calls by tool and outcome and their
// duration, permission decisions, questions put to the user and their
// answers, persisted result bytes, HTTP responses by status, and gauges
// of sessions and per-token states read when scraped. The caller adds
// what lives outside the server (background tasks, sandbox launches) with
// [Metrics.Register]. A nil *Metrics records nothing.
type Metrics struct {
	reg        *prometheus.Registry
	calls      *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	decisions  *prometheus.CounterVec
	questions  prometheus.Counter
	answers    *prometheus.CounterVec
	persisted  prometheus.Counter
	persists   prometheus.Counter
	responses  *prometheus.CounterVec
	gaugesDone bool
}

// NewMetrics makes the server's series in a fresh registry, with the Go
// runtime's and the process's collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	f := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: MetricsNamespace, Name: name, Help: help}
	}
	m := &Metrics{
		reg: reg,
		calls: prometheus.NewCounterVec(f("tool_calls_total",
			"Tool calls answered, by tool and outcome (ok, error: an error result, refused: refused by the permission decision, failed: a protocol error)."),
			[]string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: MetricsNamespace, Name: "tool_call_duration_seconds",
			Help:    "How long tool calls took, from the request to the answer, by tool.",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 15, 60, 300, 600}}, []string{"tool"}),
		decisions: prometheus.NewCounterVec(f("permission_decisions_total",
			"Permission decisions on tool calls, by behavior (allow, deny, ask: asked and not allowed)."), []string{"behavior"}),
		questions: prometheus.NewCounter(f("questions_total",
			"Questions put to the user through the client (permission questions and AskUserQuestion).")),
		answers: prometheus.NewCounterVec(f("answers_total",
			"The user's answers to questions, by action (accept, decline, cancel, error: no answer came, invalid: an action the protocol does not name)."), []string{"action"}),
		persisted: prometheus.NewCounter(f("persisted_result_bytes_total",
			"Bytes of results over their tool's budget saved to the state directory.")),
		persists: prometheus.NewCounter(f("persisted_results_total",
			"Results over their tool's budget saved to the state directory.")),
		responses: prometheus.NewCounterVec(f("http_responses_total",
			"HTTP responses, by status code."), []string{"code"}),
	}
	reg.MustRegister(m.calls, m.duration, m.decisions, m.questions, m.answers, m.persisted, m.persists, m.responses,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Register adds collectors of the caller's (gauges of background tasks,
// counters of sandbox launches) to the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// GaugeFunc is a gauge named agent_mcp_<name> whose value f gives when
// scraped.
func GaugeFunc(name, help string, f func() float64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: MetricsNamespace, Name: name, Help: help}, f)
}

// CounterFunc is a counter named agent_mcp_<name> whose value f gives
// when scraped.
func CounterFunc(name, help string, f func() float64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: MetricsNamespace, Name: name, Help: help}, f)
}

// watch registers the gauges read from s once.
func (m *Metrics) watch(s *Server) {
	if m == nil || m.gaugesDone {
		return
	}
	m.gaugesDone = true
	m.reg.MustRegister(
		GaugeFunc("sessions", "MCP sessions open (stdio, or HTTP sessions of protocols before 2026-07-28).", func() float64 {
			s.mu.Lock()
			defer s.mu.Unlock()
			return float64(len(s.sessions))
		}),
		GaugeFunc("token_states", "Per-token states kept for clients without sessions (protocol 2026-07-28 over HTTP).", func() float64 {
			s.principals.mu.Lock()
			defer s.principals.mu.Unlock()
			return float64(len(s.principals.byID))
		}),
	)
}

// outcomeOf names how a call ended: ok, error (an error result), refused
// (by the permission decision) or failed (a protocol error).
func outcomeOf(out orchestrator.Outcome, failed bool) string {
	switch {
	case failed:
		return "failed"
	case out.Decision.Behavior != permissions.Passthrough && !out.Decision.Allowed():
		return "refused"
	case out.Result != nil && out.Result.IsError:
		return "error"
	}
	return "ok"
}

// call records a finished call of tool: its outcome and duration.
func (m *Metrics) call(tool, outcome string, out orchestrator.Outcome, took time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.duration.WithLabelValues(tool).Observe(took.Seconds())
	if b := out.Decision.Behavior; b != permissions.Passthrough {
		m.decisions.WithLabelValues(b.String()).Inc()
	}
	if p := out.Persisted; p != nil {
		m.persists.Inc()
		m.persisted.Add(float64(p.Size))
	}
}

// response counts an HTTP response.
func (m *Metrics) response(code int) {
	if m == nil {
		return
	}
	m.responses.WithLabelValues(strconv.Itoa(code)).Inc()
}

// countedAsker counts the questions an asker puts and their answers.
type countedAsker struct {
	tools.Asker
	m *Metrics
}

func (a countedAsker) Ask(ctx context.Context, message string, schema map[string]any) (tools.Answer, error) {
	a.m.questions.Inc()
	ans, err := a.Asker.Ask(ctx, message, schema)
	// The label comes from a fixed set: the action is the client's
	// string, and every new value would be a series of its own.
	action := ans.Action
	switch {
	case err != nil || action == "":
		action = "error"
	case action != "accept" && action != "decline" && action != "cancel":
		action = "invalid"
	}
	a.m.answers.WithLabelValues(action).Inc()
	return ans, err
}

// asker wraps a, counting its questions; nil stays nil.
func (m *Metrics) asker(a tools.Asker) tools.Asker {
	if m == nil || a == nil {
		return a
	}
	return countedAsker{Asker: a, m: m}
}

// statusRecorder remembers the status an HTTP handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush passes flushes on (streamed responses).
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// counted counts next's responses by status.
func (m *Metrics) counted(next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.code == 0 {
			rec.code = http.StatusOK
		}
		m.response(rec.code)
	})
}
