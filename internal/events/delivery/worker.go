package delivery

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
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
	// Concurrency bounds this instance's attempts in flight. Optional. Default 16.
	Concurrency int
	// PerEndpoint bounds this instance's attempts in flight to one endpoint, so a
	// slow receiver neither takes every slot nor gets flooded. Optional. Default 4.
	PerEndpoint int
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

	wake     chan struct{}
	initOnce sync.Once
}

func (w *Worker) init() {
	w.initOnce.Do(func() {
		w.wake = make(chan struct{}, 1)
		if w.Concurrency <= 0 {
			w.Concurrency = 16
		}
		if w.PerEndpoint <= 0 {
			w.PerEndpoint = 4
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
// by AttemptTimeout) and returns nil.
func (w *Worker) Run(ctx context.Context) error {
	w.init()
	p := &pool{inFlight: map[string]int{}, done: make(chan struct{}, 1)}
	timer := time.NewTicker(w.Poll)
	defer timer.Stop()
	for {
		w.fill(ctx, p)
		select {
		case <-ctx.Done():
			p.wg.Wait()
			return nil
		case <-w.wake:
		case <-p.done:
		case <-timer.C:
		}
	}
}

// pool tracks this instance's attempts in flight.
type pool struct {
	wg       sync.WaitGroup
	mu       sync.Mutex
	inFlight map[string]int // endpoint ID → attempts in flight
	total    int
	done     chan struct{} // signalled when an attempt ends: a slot is free
}

// fill claims due deliveries while this instance has free slots, and starts them.
func (w *Worker) fill(ctx context.Context, p *pool) {
	// Attempts outlive ctx's end by at most AttemptTimeout, so a shutdown does not
	// cut a delivery the receiver may already have taken.
	actx := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		p.mu.Lock()
		free := w.Concurrency - p.total
		var skip []string
		for ep, n := range p.inFlight {
			if n >= w.PerEndpoint {
				skip = append(skip, ep)
			}
		}
		p.mu.Unlock()
		if free <= 0 {
			return
		}
		jobs, err := w.Store.Claim(ctx, w.Now(), w.Lease, free, skip)
		if err != nil {
			if ctx.Err() == nil {
				w.Logger.Warn("webhook delivery: claim failed", slog.String("error", err.Error()))
			}
			return
		}
		for _, j := range jobs {
			w.start(actx, p, j)
		}
		if len(jobs) < free {
			return
		}
	}
}

// start runs j's attempt unless its endpoint is at its bound, in which case j goes
// back to the queue, due at once.
func (w *Worker) start(ctx context.Context, p *pool, j *Job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inFlight[j.EndpointID] >= w.PerEndpoint {
		w.release(ctx, j)
		return
	}
	p.inFlight[j.EndpointID]++
	p.total++
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		w.attempt(ctx, j)
		p.mu.Lock()
		if p.inFlight[j.EndpointID]--; p.inFlight[j.EndpointID] == 0 {
			delete(p.inFlight, j.EndpointID)
		}
		p.total--
		p.mu.Unlock()
		select {
		case p.done <- struct{}{}:
		default:
		}
	}()
}

func (w *Worker) release(ctx context.Context, j *Job) {
	if err := w.Store.Release(ctx, j); err != nil && !errors.Is(err, ErrLeaseLost) {
		w.Logger.Warn("webhook delivery: release failed", slog.String("error", err.Error()))
	}
}

// attempt sends j once and settles it.
func (w *Worker) attempt(ctx context.Context, j *Job) {
	status, failure, d := w.Sender.Send(ctx, j)
	now := w.Now().UTC()
	r := &Result{Delivered: failure == ""}
	r.Attempt.EndpointID, r.Attempt.EventID, r.Attempt.N = j.EndpointID, j.EventID, j.Attempt
	r.Attempt.StatusCode, r.Attempt.Error, r.Attempt.Duration = status, failure, d
	r.Attempt.CreatedAt = now.Truncate(time.Microsecond)
	outcome := OutcomeDelivered
	if !r.Delivered {
		outcome = OutcomeGaveUp
		if next := now.Add(w.Backoff.Wait(j.Attempt)); !next.After(j.RetryUntil) {
			r.RetryAt, outcome = next, OutcomeRetrying
		}
	}
	err := w.Store.Settle(ctx, j, r)
	switch {
	case errors.Is(err, ErrLeaseLost):
		w.Logger.Warn("webhook delivery: claim lost before settling; another attempt will follow",
			slog.String("eventId", j.EventID), slog.String("endpointId", j.EndpointID))
		return
	case err != nil:
		// The claim's lease ends and the delivery falls due again: at least once.
		w.Logger.Error("webhook delivery: could not record the attempt", slog.String("eventId", j.EventID),
			slog.String("endpointId", j.EndpointID), slog.String("error", err.Error()))
		return
	}
	w.Metrics.observe(outcome, now.Sub(j.CreatedAt))
	w.Logger.Info("webhook delivery", slog.String("eventId", j.EventID), slog.String("endpointId", j.EndpointID),
		slog.Int("attempt", j.Attempt), slog.String("outcome", outcome), slog.Int("status", status),
		slog.Duration("duration", d))
}
