package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Redis is a Store shared by every process that uses the same Redis and prefix: one
// GCRA bucket per key, kept and updated atomically in Redis by redis_rate's script
// (on Redis's clock, so instances' clocks need not agree).
//
// A round trip to Redis per request would cost more than the rest of a fast write,
// so where the limit is generous an instance takes several requests' worth of the
// bucket at once (a lease, redis_rate's AllowAtMost: at most what the bucket refills
// in leaseRefill, and a quarter of the burst) and spends it locally for at most
// leaseFor. Once half a lease is spent, the instance tops it up to its full size in
// the background while requests go on spending what is left, so a credential that
// keeps sending waits for Redis only on its first request after a quiet second (and
// when it outruns a top-up). Leased requests have left the shared bucket before any of them runs, so
// the bucket never admits more than the limit; an instance never holds more than one
// lease's size, top-ups included, so requests spent from leases in any window exceed
// what the bucket admitted in it by at most one lease's size per instance, whatever
// leaseFor is. A lease that expires unspent admits fewer, by at most its size. Where
// the limit is tight (a lease would be one request) every request asks Redis.
type Redis struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	prefix  string
	leases  sync.Map // key → *lease
	swept   atomic.Int64
	// downUntil (unix nanoseconds) is set for a pause after a failure: until then
	// Allow fails at once instead of dialling a Redis that just failed, so an outage
	// costs requests no time.
	downUntil atomic.Int64
}

// ErrPaused is Allow's error while Redis is left alone after a failure.
var ErrPaused = errors.New("ratelimit: Redis failed less than a second ago; not tried")

// pauseAfterFailure is how long Allow leaves Redis alone after it failed.
const pauseAfterFailure = time.Second

// Timeouts of one limit check: a rate limit must never be what makes a request slow
// or hang, so Redis gets little time and no retries; the caller fails open.
const (
	redisDialTimeout = 250 * time.Millisecond
	redisIOTimeout   = 100 * time.Millisecond
)

// NewRedis connects to url (redis://…, as REDIS_URL) lazily, on first use; every key
// it writes starts with prefix. Errors: url does not parse.
func NewRedis(url, prefix string) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
	opt.PoolTimeout = redisIOTimeout
	opt.MaxRetries = -1
	opt.DialerRetries, opt.DialerRetryTimeout = 1, time.Millisecond
	c := redis.NewClient(opt)
	return &Redis{client: c, limiter: redis_rate.NewLimiter(c), prefix: prefix}, nil
}

// leaseRefill sizes a lease: at most what the bucket refills in that time.
const leaseRefill = 50 * time.Millisecond

// leaseFor bounds how long an instance keeps a lease. The size, not this, bounds what
// a lease can add to a window (above); long enough that a credential sending a few
// requests a second spends a lease before it expires instead of asking Redis each
// time, short enough that RateLimit's remaining count is at most this stale.
const leaseFor = time.Second

// lease is the part of one key's bucket this instance holds.
type lease struct {
	mu        sync.Mutex
	left      int       // requests still to spend
	until     time.Time // when the unspent ones are given up
	remaining int       // the shared bucket's Remaining when the lease was last taken
	reset     time.Time // when the shared bucket was to be full again
	// topping is open while a top-up is in flight and closed when it has landed (or
	// failed); nil otherwise. A request that finds the lease empty waits for it
	// rather than asking Redis a second time.
	topping chan struct{}
}

// Allow implements Store. Errors: Redis could not be reached or answered badly.
func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	now := time.Now()
	if now.UnixNano() < r.downUntil.Load() {
		return Result{}, ErrPaused
	}
	r.sweep(now)
	size := min(int(l.RPS*leaseRefill.Seconds()), l.Burst/4)
	if size <= 1 {
		res, err := r.take(ctx, key, l, 1)
		return res.Result, err
	}
	v, _ := r.leases.LoadOrStore(key, &lease{})
	le := v.(*lease)
	le.mu.Lock()
	for le.topping != nil && (le.left == 0 || !now.Before(le.until)) {
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
	if le.left == 0 || !now.Before(le.until) {
		res, err := r.take(ctx, key, l, size)
		if err != nil || !res.Allowed {
			le.left = 0
			le.mu.Unlock()
			return res.Result, err
		}
		le.left, le.until, le.remaining, le.reset = res.leased, now.Add(leaseFor), res.Remaining, now.Add(res.ResetAfter)
	}
	le.left--
	out := Result{Allowed: true, Remaining: le.remaining + le.left, ResetAfter: max(0, le.reset.Sub(now))}
	if le.topping == nil && le.left <= size/2 && now.UnixNano() >= r.downUntil.Load() {
		le.topping = make(chan struct{})
		go r.topUp(key, l, le, size-le.left)
	}
	le.mu.Unlock()
	return out, nil
}

// topUp takes up to n more requests from key's shared bucket into le, off any
// request's path. Refused or failed, it leaves le as it is: the request that finds
// le empty asks Redis itself and gets the refusal, or fails open.
func (r *Redis) topUp(key string, l Limit, le *lease, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), redisDialTimeout+redisIOTimeout)
	defer cancel()
	res, err := r.take(ctx, key, l, n)
	now := time.Now()
	le.mu.Lock()
	defer le.mu.Unlock()
	if err == nil && res.Allowed {
		if !now.Before(le.until) {
			le.left = 0 // the rest expired meanwhile
		}
		le.left += res.leased
		le.until, le.remaining, le.reset = now.Add(leaseFor), res.Remaining, now.Add(res.ResetAfter)
	}
	close(le.topping)
	le.topping = nil
}

// taken is a Result with how many requests it took from the shared bucket.
type taken struct {
	Result
	leased int
}

// take takes up to n requests from key's shared bucket (at least one, or none and a
// refusal).
func (r *Redis) take(ctx context.Context, key string, l Limit, n int) (taken, error) {
	// GCRA needs only the emission interval and the burst: one request per 1/RPS.
	lim := redis_rate.Limit{Rate: 1, Burst: l.Burst, Period: time.Duration(float64(time.Second) / l.RPS)}
	res, err := r.limiter.AllowAtMost(ctx, r.prefix+key, lim, n)
	if err != nil {
		r.downUntil.Store(time.Now().Add(pauseAfterFailure).UnixNano())
		return taken{}, err
	}
	out := taken{Result: Result{Allowed: res.Allowed > 0, Remaining: res.Remaining, ResetAfter: max(0, res.ResetAfter)},
		leased: res.Allowed}
	if !out.Allowed {
		out.RetryAfter = max(0, res.RetryAfter)
	}
	return out, nil
}

// sweep drops expired leases, at most once a minute, so that memory follows the keys
// active in the last minute.
func (r *Redis) sweep(now time.Time) {
	last := r.swept.Load()
	if now.UnixNano()-last < int64(time.Minute) || !r.swept.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	r.leases.Range(func(k, v any) bool {
		le := v.(*lease)
		if le.mu.TryLock() {
			if !now.Before(le.until) {
				r.leases.Delete(k)
			}
			le.mu.Unlock()
		}
		return true
	})
}

// Prefix is the prefix of every key r writes.
func (r *Redis) Prefix() string { return r.prefix }

// Close closes the connections to Redis.
func (r *Redis) Close() error { return r.client.Close() }

func init() {
	// go-redis prints dial failures with the standard logger, once per attempt; the
	// caller reports a failing store itself (a metric, and a rate-limited warning).
	redis.SetLogger(silent{})
}

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}
