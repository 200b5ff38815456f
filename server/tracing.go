package server

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing sends a span per tool call, with a child span per pipeline step
// (orchestrator.Tracer), to an OpenTelemetry collector over OTLP/HTTP. A
// call continues the trace its client names in the request's _meta
// (`traceparent`, `tracestate`, W3C Trace Context). A nil *Tracing
// traces nothing. Off unless asked for: see [TracingWanted].
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// TracingWanted reports whether tracing was asked for without a flag:
// one of the standard OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variables is set (and OTEL_SDK_DISABLED
// is not true).
func TracingWanted(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewTracing starts exporting spans over OTLP/HTTP (protobuf). endpoint,
// if not empty, is the collector's base URL (http://host:4318);
// otherwise OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the whole URL) or
// OTEL_EXPORTER_OTLP_ENDPOINT (the base, to which /v1/traces is added)
// says where, and http://localhost:4318 without either.
// OTEL_EXPORTER_OTLP_HEADERS (k=v,k=v) are sent with every export. The
// service is named agent-mcp unless OTEL_SERVICE_NAME says otherwise.
func NewTracing(ctx context.Context, endpoint, version string) (*Tracing, error) {
	client, err := newOTLPClient(endpoint, os.Getenv)
	if err != nil {
		return nil, err
	}
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	name := os.Getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "agent-mcp"
	}
	res := resource.NewSchemaless(attribute.String("service.name", name), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{provider: tp, tracer: tp.Tracer("github.com/agent-mcp/agent-mcp/server")}, nil
}

// Shutdown sends what is left and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Step starts a pipeline step's span as a child of the call's
// (orchestrator.Tracer).
func (t *Tracing) Step(ctx context.Context, tool, step string) (context.Context, func(error)) {
	ctx, span := t.tracer.Start(ctx, step, trace.WithAttributes(attribute.String("mcp.tool.name", tool)))
	return ctx, func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// metaCarrier reads W3C Trace Context fields from a request's _meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	v, _ := m[key].(string)
	return v
}

func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// startCall starts the span of a tools/call of tool, continuing the trace
// named in meta. end closes it with the call's outcome.
func (t *Tracing) startCall(ctx context.Context, tool string, meta map[string]any) (context.Context, func(outcome string, err error)) {
	if t == nil {
		return ctx, func(string, error) {}
	}
	if len(meta) > 0 {
		ctx = propagation.TraceContext{}.Extract(ctx, metaCarrier(meta))
	}
	ctx, span := t.tracer.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.String("mcp.tool.name", tool)))
	return ctx, func(outcome string, err error) {
		span.SetAttributes(attribute.String("agent_mcp.outcome", outcome))
		switch {
		case err != nil:
			span.SetStatus(codes.Error, err.Error())
		case outcome != "ok":
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}
}
