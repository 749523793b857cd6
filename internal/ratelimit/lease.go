package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Leases. A round trip to Redis per request would cost more than the rest of a fast
// write, so where the limit is generous an instance takes several requests' worth
// of a key's shared bucket at once — a lease: at most what the bucket refills in
// leaseRefill, and a quarter of the burst — and spends it locally for at most
// leaseFor. Once half a lease is spent the instance tops it up to its full size in
// the background while requests go on spending what is left, so a credential that
// keeps sending waits for Redis only on its first request after a quiet second (or
// when it outruns a top-up).
//
// Bounds: leased requests have left the shared bucket before any of them runs, so
// the bucket never admits more than the limit; an instance never holds more than one
// lease's size, top-ups included, so requests spent from leases in any window exceed
// what the bucket admitted in it by at most one lease's size per instance, whatever
// leaseFor is. A lease that expires unspent admits fewer, by at most its size. A
// bucket last seen holding less than a lease is asked for one request at a time
// (ask), so a saturated credential is admitted its whole limit.

// leaseRefill sizes a lease: at most what the bucket refills in that time.
const leaseRefill = 50 * time.Millisecond

// leaseFor bounds how long an instance keeps a lease. The size, not this, bounds what
// a lease can add to a window (above); long enough that a credential sending a few
// requests a second spends a lease before it expires instead of asking Redis each
// time, short enough that RateLimit's remaining count is at most this stale.
const leaseFor = time.Second

// leaseSize is the most an instance leases of a bucket of limit l; ≤ 1: no leases.
func leaseSize(l Limit) int { return min(int(l.RPS*leaseRefill.Seconds()), l.Burst/4) }

// lease is the part of one key's bucket this instance holds.
type lease struct {
	mu    sync.Mutex
	left  int       // requests still to spend
	until time.Time // when the unspent ones are given up
	// seen is the shared bucket's Remaining after this instance's last round trip
	// for the key; -1 before the first.
	seen int
	// failedAt and err: this key's last round trip failed then, with err; zero
	// after one succeeds.
	failedAt time.Time
	err      error
	// topping is open while a top-up is in flight and closed when it has landed (or
	// failed); nil otherwise. A request that finds the lease empty waits for it
	// rather than asking Redis a second time.
	topping chan struct{}
}

func (r *Redis) lease(key string) *lease {
	if v, ok := r.leases.Load(key); ok {
		return v.(*lease)
	}
	v, _ := r.leases.LoadOrStore(key, &lease{seen: -1})
	return v.(*lease)
}

func (le *lease) empty(now time.Time) bool { return le.left == 0 || !now.Before(le.until) }

// ask is how many requests to ask the bucket for: a whole lease while the bucket
// was last seen holding one, else one at a time. Other instances spend the bucket
// meanwhile, so asking for what it was last seen to hold would still often ask for
// more than is left, and lose the fraction (take).
func (le *lease) ask(size int) int {
	if le.seen < 0 || le.seen >= size {
		return size
	}
	return 1
}

// allowLeased is Allow for a limit with leases of size > 1; arrived is when the
// request arrived.
func (r *Redis) allowLeased(ctx context.Context, key string, l Limit, size int, arrived time.Time) (Result, error) {
	le := r.lease(key)
	le.mu.Lock()
	now := arrived
	for le.topping != nil && le.empty(now) {
		landed := le.topping
		le.mu.Unlock()
		select {
		case <-landed:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
		le.mu.Lock()
		now = time.Now()
	}
	if le.empty(now) {
		if err := r.paused(now); err != nil {
			le.mu.Unlock()
			return Result{}, err
		}
		if le.failedAt.After(arrived) { // queued behind a round trip that failed
			err := fmt.Errorf("%w (the key's last round trip failed as this request waited: %v)", ErrPaused, le.err)
			le.mu.Unlock()
			return Result{}, err
		}
		res, err := r.take(ctx, key, l, le.ask(size))
		if err != nil {
			le.left = 0
			if ctx.Err() == nil {
				le.failedAt, le.err = time.Now(), err
			}
			le.mu.Unlock()
			return Result{}, err
		}
		le.seen, le.failedAt = res.Remaining, time.Time{}
		if !res.Allowed {
			le.left = 0
			le.mu.Unlock()
			return res.Result, nil
		}
		le.left, le.until = res.leased, now.Add(leaseFor)
	}
	le.left--
	out := le.result(l)
	if le.topping == nil && le.left <= size/2 && le.seen >= size && r.paused(now) == nil {
		le.topping = make(chan struct{})
		go r.topUp(key, l, le, size-le.left)
	}
	le.mu.Unlock()
	return out, nil
}

// result is an admitted request's Result: what this instance still holds plus what
// the bucket held when last seen, at most the burst, and the time the bucket takes
// to refill the difference (IETF RateLimit's r and t).
func (le *lease) result(l Limit) Result {
	rem := min(l.Burst, max(0, le.seen)+le.left)
	return Result{Allowed: true, Remaining: rem, ResetAfter: seconds(float64(l.Burst-rem) / l.RPS)}
}

// topUp takes up to n more requests from key's shared bucket into le, off any
// request's path; go-redis's timeouts bound it. Refused or failed, it leaves le's
// requests as they are: the request that finds le empty asks Redis itself and gets
// the refusal, or — after a failure — fails open without asking.
func (r *Redis) topUp(key string, l Limit, le *lease, n int) {
	res, err := r.take(context.Background(), key, l, n)
	now := time.Now()
	le.mu.Lock()
	defer le.mu.Unlock()
	switch {
	case err != nil:
		le.failedAt, le.err = now, err
	case res.Allowed:
		if !now.Before(le.until) {
			le.left = 0 // the rest expired meanwhile
		}
		le.left += res.leased
		le.until = now.Add(leaseFor)
		fallthrough
	default:
		le.seen, le.failedAt = res.Remaining, time.Time{}
	}
	close(le.topping)
	le.topping = nil
}
