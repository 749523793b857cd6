package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/riskapi/riskapi/internal/logfield"
)

// wakeDelay is how long the worker gathers wake-ups before claiming. claimGap is the
// least time between two claims unless the first came back full: every claim is a
// statement or two and, on SQLite, a turn at the write lock, so under a stream of
// commits one claim every claimGap takes the deliveries of many (about claimGap·rate)
// rather than one claim per commit or per finished attempt, at a cost of at most this
// much lag (docs/performance.md, "Events and outbound webhooks").
const (
	wakeDelay = 5 * time.Millisecond
	claimGap  = 25 * time.Millisecond
)

// Worker delivers due events. Every instance runs one; the store's claims keep two
// instances from sending the same delivery at once.
type Worker struct {
	// Store claims and settles deliveries. Required.
	Store Store
	// Sender makes the attempts. Required.
	Sender *Sender
	// Backoff spaces the retries of a failing delivery. Optional. Default Backoff{}.
	Backoff Backoff
	// Concurrency bounds this instance's claims: attempts in flight and claims
	// waiting for a slot of their endpoint. Optional. Default 128, so that a claim
	// (at most PerTenant) brings 32: one endpoint's stream of events then costs one
	// claim per 32 deliveries, where claims of 8 could not keep up with 16 writers
	// (docs/performance.md, "Events and outbound webhooks").
	Concurrency int
	// PerEndpoint bounds this instance's attempts in flight to one endpoint, so a
	// slow receiver neither takes its tenant's share nor gets flooded
	// (WEBHOOK_ENDPOINT_CONCURRENCY, set by internal/app; 2 when zero). A slow
	// endpoint's deliveries are claimed only as its slots free up (Skip.Slow), so
	// it holds at most PerEndpoint of its tenant's share: with the limits as
	// configured, a tenant's 16 endpoints (WEBHOOK_ENDPOINTS_MAX) at 2 each fit in
	// its 32, and 15 hanging ones leave the 16th its slots.
	PerEndpoint int
	// PerTenant bounds one tenant's share of this instance's claims (attempts in
	// flight and claims waiting), so that one tenant's slow or failing endpoints
	// cannot hold every slot and delay the others' deliveries. A claim brings at
	// most PerTenant deliveries, so a tenant holds fewer than 2×PerTenant at worst.
	// Optional. Default Concurrency/4.
	PerTenant int
	// Lease is how long a claim holds a delivery; past it another instance may take
	// it over. It must exceed AttemptTimeout. Optional. Default AttemptTimeout+5s.
	Lease time.Duration
	// Poll is how often the store is asked for due deliveries when nothing wakes
	// the worker. Optional. Default 1s.
	Poll time.Duration
	// Metrics, optional.
	Metrics *Metrics
	// Logger, optional (slog.Default()).
	Logger *slog.Logger
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// AfterFailures, optional, runs after a batch holding failed attempts is
	// recorded: the auto-disable of endpoints failing for too long
	// (events.Endpoints.AutoDisable).
	AfterFailures func(ctx context.Context)

	wake     chan struct{}
	initOnce sync.Once
}

func (w *Worker) init() {
	w.initOnce.Do(func() {
		w.wake = make(chan struct{}, 1)
		if w.Concurrency <= 0 {
			w.Concurrency = 128
		}
		if w.PerEndpoint <= 0 {
			w.PerEndpoint = 2
		}
		if w.PerTenant <= 0 {
			w.PerTenant = max(1, w.Concurrency/4)
		}
		if w.Lease <= AttemptTimeout {
			w.Lease = AttemptTimeout + 5*time.Second
		}
		if w.Poll <= 0 {
			w.Poll = time.Second
		}
		if w.Logger == nil {
			w.Logger = slog.Default()
		}
		if w.Now == nil {
			w.Now = time.Now
		}
	})
}

// Wake makes the worker look for due deliveries now, rather than at its next poll.
// Call it after committing a transaction that queued deliveries. It never blocks.
func (w *Worker) Wake() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight (each bounded
// by AttemptTimeout), records their results and returns nil.
func (w *Worker) Run(ctx context.Context) error {
	w.init()
	p := &pool{inFlight: map[string]int{}, queued: map[string][]*Job{}, tenants: map[string]int{}, slow: map[string]time.Time{},
		done:    make(chan struct{}, 1),
		results: make(chan Settlement, 4*w.Concurrency)}
	settled := make(chan struct{})
	go func() { defer close(settled); w.settle(context.WithoutCancel(ctx), p.results) }()
	timer := time.NewTicker(w.Poll)
	defer timer.Stop()
	for {
		more := w.fill(ctx, p)
		claimed := time.Now()
	wait:
		for {
			select {
			case <-ctx.Done():
				w.releaseQueued(context.WithoutCancel(ctx), p)
				p.wg.Wait()
				close(p.results)
				<-settled
				return nil
			case <-w.wake:
				// Commits come in bursts under load: a short pause lets one claim take
				// the deliveries of many, at a cost of this much lag.
				pause(ctx, wakeDelay)
				break wait
			case <-p.done:
				// A slot is free. Worth a claim only if the last one may have left due
				// deliveries behind (it came back full, or skipped endpoints or tenants
				// at their bound, or found no free slot); new ones wake the worker.
				if more {
					break wait
				}
			case <-timer.C:
				break wait
			}
		}
		pause(ctx, time.Until(claimed.Add(claimGap)))
	}
}

// pause waits d (nothing if d ≤ 0) or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// attempt sends j once and returns the result to settle. The endpoint's slot is
// free again as soon as the answer is in; recording it is the settler's.
func (w *Worker) attempt(ctx context.Context, j *Job) Settlement {
	status, failure, d := w.Sender.Send(ctx, j)
	now := w.Now().UTC()
	r := &Result{Delivered: failure == ""}
	r.Attempt.EndpointID, r.Attempt.EventID, r.Attempt.N = j.EndpointID, j.EventID, j.Attempt
	r.Attempt.StatusCode, r.Attempt.Error, r.Attempt.Duration = status, failure, d
	r.Attempt.CreatedAt = now.Truncate(time.Microsecond)
	if !r.Delivered {
		if next := now.Add(w.Backoff.Wait(j.Attempt)); !next.After(j.RetryUntil) {
			r.RetryAt = next
		}
	}
	return Settlement{Job: j, Result: r}
}

// maxSettleBatch bounds the results recorded in one transaction; settleDelay is how
// long the settler gathers results before recording them. A result waiting there
// holds no slot: the endpoint's next attempt has already started.
const (
	maxSettleBatch = 64
	settleDelay    = 10 * time.Millisecond
)

// settle records results as they come, as many as are waiting in one transaction:
// under load one commit covers many deliveries. It returns once results is closed
// and drained. A batch that cannot be recorded is logged; its claims' leases end and
// the deliveries fall due again (at least once).
func (w *Worker) settle(ctx context.Context, results <-chan Settlement) {
	for first := range results {
		batch := []Settlement{first}
		gather := time.NewTimer(settleDelay)
	drain:
		for len(batch) < maxSettleBatch {
			select {
			case s, ok := <-results:
				if !ok {
					break drain
				}
				batch = append(batch, s)
			case <-gather.C:
				break drain
			}
		}
		gather.Stop()
		held, err := w.Store.Settle(ctx, batch)
		if err != nil {
			w.Logger.Error("webhook delivery: could not record attempts; their deliveries will be retried",
				slog.Int("attempts", len(batch)), slog.String("error", err.Error()))
			continue
		}
		failed := false
		for i, s := range batch {
			w.report(s, held[i])
			failed = failed || (held[i] && !s.Result.Delivered)
		}
		if failed && w.AfterFailures != nil {
			w.AfterFailures(ctx)
		}
	}
}

// report counts and logs one recorded attempt.
func (w *Worker) report(s Settlement, held bool) {
	j, r := s.Job, s.Result
	if !held {
		w.Logger.Warn("webhook delivery: claim lost before settling; another attempt will follow",
			slog.String("eventId", j.EventID), slog.String("endpointId", j.EndpointID))
		return
	}
	outcome := OutcomeDelivered
	switch {
	case r.Delivered:
	case !r.RetryAt.IsZero():
		outcome = OutcomeRetrying
	default:
		outcome = OutcomeGaveUp
	}
	w.Metrics.observe(outcome, r.Attempt.CreatedAt.Sub(j.CreatedAt))
	w.Logger.Debug("webhook delivery", slog.String("eventId", j.EventID), slog.String("endpointId", j.EndpointID),
		slog.Int("attempt", j.Attempt), slog.String("outcome", outcome), slog.Int("status", r.Attempt.StatusCode),
		logfield.Duration(r.Attempt.Duration))
}
