package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpClient is the transport of the OTLP trace exporter
// (otlptrace.Client): each batch is POSTed to the collector's
// /v1/traces as an ExportTraceServiceRequest in protobuf.
//
// It is ours rather than the SDK's otlptracehttp because that package
// links gRPC and html/template (for the request type's generated service
// code), whose reflective method calls keep the linker from dropping
// unused methods anywhere in the binary: measured, it made the stripped
// binary 42 MB larger. The request is one repeated field, written here
// around the ResourceSpans the SDK's own transform makes.
type otlpClient struct {
	url     string
	headers http.Header
	http    *http.Client
}

// newOTLPClient reads where to send from endpoint or the standard
// variables (see NewTracing).
func newOTLPClient(endpoint string, getenv func(string) string) (*otlpClient, error) {
	target := ""
	switch {
	case endpoint != "":
		target = strings.TrimSuffix(endpoint, "/") + "/v1/traces"
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		target = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		target = strings.TrimSuffix(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	default:
		target = "http://localhost:4318/v1/traces"
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tracing: the OTLP endpoint %q is not an http(s) URL", target)
	}
	h := http.Header{}
	for _, kv := range strings.Split(getenv("OTEL_EXPORTER_OTLP_HEADERS"), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			continue
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return &otlpClient{url: u.String(), headers: h, http: &http.Client{Timeout: 10 * time.Second}}, nil
}

// Start is part of otlptrace.Client; there is nothing to open.
func (c *otlpClient) Start(context.Context) error { return nil }

// Stop is part of otlptrace.Client; idle connections are closed.
func (c *otlpClient) Stop(context.Context) error {
	c.http.CloseIdleConnections()
	return nil
}

// UploadTraces sends one batch.
func (c *otlpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	var body []byte
	for _, rs := range spans {
		b, err := proto.Marshal(rs)
		if err != nil {
			return fmt.Errorf("tracing: encoding spans: %w", err)
		}
		// ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("tracing: sending spans to %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("tracing: the collector at %s answered %s", c.url, resp.Status)
	}
	return nil
}
