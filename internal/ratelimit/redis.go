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
// (on Redis's clock, so instances' clocks need not agree). Where the limit is
// generous an instance takes requests from the bucket in leases (lease.go); where it
// is tight every request asks Redis.
//
// Redis failing never fails a request: Allow returns the error and the caller lets
// the request through (internal/server). Once round trips have failed for
// failingBeforePause with none succeeding, Allow stops asking for pauseAfterFailure,
// so an outage costs requests no time; a request that queued behind a failed round
// trip for its key does not try again either. A round trip abandoned because the request's own
// context ended (a client that hung up) is not Redis failing and counts for nothing.
type Redis struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	prefix  string
	leases  sync.Map // key → *lease
	swept   atomic.Int64
	// failingSince (unix nanoseconds) is when the first round trip failed since the
	// last one that succeeded; 0 while they succeed.
	failingSince atomic.Int64
	// downUntil (unix nanoseconds) ends the pause after failures.
	downUntil atomic.Int64
	// lastErr is the last round trip's error, reported with ErrPaused.
	lastErr atomic.Pointer[error]
}

// ErrPaused is wrapped by Allow's error while Redis is left alone after failures.
var ErrPaused = errors.New("ratelimit: Redis is failing; not tried")

// Once round trips have failed for failingBeforePause with none succeeding, Allow
// leaves Redis alone for pauseAfterFailure. Time, not a count: a stall of a few
// hundred milliseconds fails every round trip in flight at once, and must cost only
// those requests their count, not switch every limit of the instance off for a
// second; an outage is recognised within half a second.
const (
	failingBeforePause = 500 * time.Millisecond
	pauseAfterFailure  = time.Second
)

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

// Allow implements Store. Errors: Redis could not be reached or answered badly
// (ErrPaused while it is left alone), or ctx ended.
func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	now := time.Now()
	if err := r.paused(now); err != nil {
		return Result{}, err
	}
	r.sweep(now)
	if size := leaseSize(l); size > 1 {
		return r.allowLeased(ctx, key, l, size, now)
	}
	res, err := r.take(ctx, key, l, 1)
	return res.Result, err
}

// paused is ErrPaused, with the error that caused the pause, until downUntil.
func (r *Redis) paused(now time.Time) error {
	if now.UnixNano() >= r.downUntil.Load() {
		return nil
	}
	if last := r.lastErr.Load(); last != nil {
		return fmt.Errorf("%w (last error: %v)", ErrPaused, *last)
	}
	return ErrPaused
}

// taken is a Result with how many requests it took from the shared bucket.
type taken struct {
	Result
	leased int
}

// take takes up to n requests from key's shared bucket (at least one, or none and a
// refusal). redis_rate's AllowAtMost takes exactly n when n are left; when fewer
// are, it takes the fractional rest but reports its whole part, losing the
// fraction, so a bucket that may hold less than a lease is asked for one request
// at a time (lease.go).
func (r *Redis) take(ctx context.Context, key string, l Limit, n int) (taken, error) {
	// GCRA needs only the emission interval and the burst: one request per 1/RPS.
	lim := redis_rate.Limit{Rate: 1, Burst: l.Burst, Period: time.Duration(float64(time.Second) / l.RPS)}
	res, err := r.limiter.AllowAtMost(ctx, r.prefix+key, lim, n)
	if err != nil {
		if ctx.Err() != nil {
			return taken{}, ctx.Err() // the caller gave up; Redis did not fail
		}
		r.failed(err)
		return taken{}, err
	}
	r.failingSince.Store(0)
	out := taken{Result: Result{Allowed: res.Allowed > 0, Remaining: res.Remaining, ResetAfter: max(0, res.ResetAfter)},
		leased: res.Allowed}
	if !out.Allowed {
		out.RetryAfter = max(0, res.RetryAfter)
	}
	return out, nil
}

// failed records a failed round trip and starts the pause once round trips have
// failed for failingBeforePause.
func (r *Redis) failed(err error) {
	r.lastErr.Store(&err)
	now := time.Now().UnixNano()
	r.failingSince.CompareAndSwap(0, now)
	if since := r.failingSince.Load(); since != 0 && now-since >= int64(failingBeforePause) {
		r.failingSince.Store(0)
		r.downUntil.Store(now + int64(pauseAfterFailure))
	}
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
			if !now.Before(le.until) && le.topping == nil {
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
