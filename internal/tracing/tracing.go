// Package tracing sets up OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT is
// set (docs/tracing.md): a tracer provider exporting over OTLP/HTTP, the W3C trace
// context propagator, and Parents, which carries a request's trace to the webhook
// deliveries of the events it emitted. When the endpoint is unset, New returns nil
// and the packages that trace (internal/server, internal/database, the delivery
// sender) install nothing: no span, callback or transport wrapper.
package tracing

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName is the service.name of riskapi's spans.
const ServiceName = "riskapi"

// Propagator reads and writes trace context as W3C traceparent and tracestate
// headers: accepted on requests, sent on outbound webhooks.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Tracing is an open tracer provider; Close flushes it.
type Tracing struct {
	provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider // the exporting provider; nil with Options.Provider
}

// Options tune New for tests; the zero value is production.
type Options struct {
	// BatchTimeout is how long spans wait to be sent in a batch. Optional. Default
	// the SDK's (5s).
	BatchTimeout time.Duration
	// Provider, when set, replaces the exporting provider New would build for a
	// set endpoint (benchmarks: a no-op provider). Optional.
	Provider trace.TracerProvider
	// Exporter, when set, replaces the OTLP exporter for a set endpoint, and each
	// span is handed to it as it ends rather than in batches (tests: tracetest's
	// in-memory exporter, which then sees what a collector would). Optional.
	Exporter sdktrace.SpanExporter
}

// New returns tracing exporting to endpoint, an http(s):// OTLP/HTTP collector URL
// (the exporter appends /v1/traces), or nil when endpoint is "" (tracing off). It
// contacts nothing until the first batch is sent; an unreachable collector costs
// the dropped spans and a logged error, never a request.
func New(ctx context.Context, endpoint string, o Options) (*Tracing, error) {
	if endpoint == "" {
		return nil, nil
	}
	if o.Provider != nil {
		return &Tracing{provider: o.Provider}, nil
	}
	export, err := processor(ctx, endpoint, o)
	if err != nil {
		return nil, err
	}
	version := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok {
		version = info.Main.Version
	}
	res := resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(ServiceName), semconv.ServiceVersion(version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(redactURLs{export}), sdktrace.WithResource(res))
	return &Tracing{provider: tp, sdk: tp}, nil
}

// processor is what exports the spans: a batcher sending to endpoint over OTLP/HTTP,
// or a syncer handing them to o.Exporter.
func processor(ctx context.Context, endpoint string, o Options) (sdktrace.SpanProcessor, error) {
	if o.Exporter != nil {
		return sdktrace.NewSimpleSpanProcessor(o.Exporter), nil
	}
	// As for OTEL_EXPORTER_OTLP_ENDPOINT in the OTLP exporter specification: the
	// traces go to the signal's path under the URL given.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	var bo []sdktrace.BatchSpanProcessorOption
	if o.BatchTimeout > 0 {
		bo = append(bo, sdktrace.WithBatchTimeout(o.BatchTimeout))
	}
	return sdktrace.NewBatchSpanProcessor(exp, bo...), nil
}

// Provider is the tracer provider, or nil when t is nil (tracing off): every
// package that traces takes a nil provider as "install nothing".
func (t *Tracing) Provider() trace.TracerProvider {
	if t == nil {
		return nil
	}
	return t.provider
}

// Close sends the spans still buffered (until ctx ends) and stops the exporter.
func (t *Tracing) Close(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}
