// Package telemetry traces the server with OpenTelemetry: a span per HTTP
// request, per database transaction and statement (through the store's
// Tracer hook) and per outbound call, with W3C trace context read from
// requests and written into outbound calls. Without a tracer provider the
// server never calls it, so tracing off costs nothing.
package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation names the spans' source.
const instrumentation = "github.com/idenplane/idenplane"

// TracesPath is where an OTLP/HTTP collector takes traces, under the base
// address the operator names (as OTEL_EXPORTER_OTLP_ENDPOINT is).
const TracesPath = "/v1/traces"

// NewProvider exports spans to the OTLP/HTTP collector at endpoint, a base
// URL such as http://collector:4318, in batches. Every trace is sampled
// unless the request that starts it says its caller did not sample it.
// The exporter's other settings come from the standard OTEL_EXPORTER_OTLP_*
// environment variables (headers, timeout, certificates, compression). The
// collector is the operator's, as the database is: calls to it do not go
// through the outbound guard. Shutdown flushes what is left.
func NewProvider(ctx context.Context, endpoint, version string) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+TracesPath))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "idenplane"), attribute.String("service.version", version))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(2*time.Second)),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	), nil
}

// Tracing makes the server's spans.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TraceContext
}

// New traces with tp; nil when tp is, and the server then traces nothing.
func New(tp trace.TracerProvider) *Tracing {
	if tp == nil {
		return nil
	}
	return &Tracing{tracer: tp.Tracer(instrumentation)}
}

// StartServer starts the span of an incoming request, the child of the
// caller's span when its traceparent header names one, and returns the
// request carrying it. Its name is the method until EndServer knows the
// route.
func (t *Tracing) StartServer(r *http.Request, clientAddr string) (*http.Request, trace.Span) {
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("http.request.method", r.Method),
		attribute.String("client.address", clientAddr),
		attribute.String("network.protocol.version", fmt.Sprintf("%d.%d", r.ProtoMajor, r.ProtoMinor)),
	))
	return r.WithContext(ctx), span
}

// EndServer names the span of a request by its route template (never the
// raw path, which may hold a token) and ends it with the answer's status;
// a 5xx is the span's error.
func EndServer(span trace.Span, method, route string, status int) {
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// Store is the store's Tracer: a span per transaction and statement,
// named by what runs it, never by its SQL or its values.
func (t *Tracing) Store(ctx context.Context, name string) (context.Context, func(error)) {
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", "sqlite")))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
}

// Client makes the calls of c spans of the request that makes them; with
// tracing off (a nil Tracing) c is left as it is.
func (t *Tracing) Client(c *http.Client) *http.Client {
	if t != nil {
		c.Transport = t.Transport(c.Transport)
	}
	return c
}

// Transport traces the calls of an outbound client: a span per call, its
// context passed on in the traceparent header.
func (t *Tracing) Transport(base http.RoundTripper) http.RoundTripper {
	return &transport{t: t, base: base}
}

type transport struct {
	t    *Tracing
	base http.RoundTripper
}

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The address without its query, which may hold a credential.
	where := url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host, Path: r.URL.Path}
	ctx, span := tr.t.tracer.Start(r.Context(), r.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("http.request.method", r.Method),
		attribute.String("server.address", r.URL.Hostname()),
		attribute.String("url.full", where.String()),
	))
	defer span.End()
	// A RoundTripper must not change the request it is given.
	r = r.Clone(ctx)
	tr.t.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
	resp, err := tr.base.RoundTrip(r)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "")
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	}
	return resp, nil
}

// TraceID is the trace a request belongs to, for its access log line; empty
// when it is not traced.
func TraceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}
