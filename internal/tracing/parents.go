package tracing

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"
)

// Parents remembers the trace of the request that emitted each recent event, so
// that the event's webhook deliveries join that trace: the delivery worker runs
// apart from the request, after it ended. It is kept in memory, for the last
// parentsKept events of this instance: a delivery made by another instance, after a
// restart, or after many later events starts a trace of its own (docs/tracing.md).
// A nil *Parents remembers nothing.
type Parents struct {
	mu    sync.Mutex
	spans map[string]trace.SpanContext
	order []string // insertion order; the oldest is forgotten first
	next  int      // where the next key goes in order once it is full
}

// parentsKept bounds Parents: enough for the deliveries a worker makes soon after
// the requests that queued them.
const parentsKept = 4096

// NewParents returns an empty Parents.
func NewParents() *Parents {
	return &Parents{spans: make(map[string]trace.SpanContext, parentsKept)}
}

// Remember notes the span ctx carries, if any, as the parent of key's spans.
func (p *Parents) Remember(ctx context.Context, key string) {
	if p == nil {
		return
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.spans[key]; ok {
		p.spans[key] = sc
		return
	}
	if len(p.order) < parentsKept {
		p.order = append(p.order, key)
	} else {
		delete(p.spans, p.order[p.next])
		p.order[p.next] = key
		p.next = (p.next + 1) % parentsKept
	}
	p.spans[key] = sc
}

// Context returns ctx with key's remembered span as its (remote) parent, or ctx
// unchanged when none is remembered.
func (p *Parents) Context(ctx context.Context, key string) context.Context {
	if p == nil {
		return ctx
	}
	p.mu.Lock()
	sc, ok := p.spans[key]
	p.mu.Unlock()
	if !ok {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}
