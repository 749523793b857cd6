package ratelimit_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/riskapi/riskapi/internal/netfault"
	"github.com/riskapi/riskapi/internal/ratelimit"
)

// stores returns the stores under test: Memory, and Redis when one answers on
// 127.0.0.1:6379 (keys under a prefix of the test's own, deleted afterwards).
func stores(t testing.TB) map[string]ratelimit.Store {
	out := map[string]ratelimit.Store{"memory": ratelimit.NewMemory()}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if c.Ping(ctx).Err() != nil {
		t.Log("no Redis on 127.0.0.1:6379: Memory only")
		return out
	}
	prefix := "riskapi-test-" + uuid.NewString() + ":"
	r, err := ratelimit.NewRedis("redis://127.0.0.1:6379/0", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		if keys, _ := c.Keys(context.Background(), "*"+prefix+"*").Result(); len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
	})
	out["redis"] = r
	return out
}

// TestBurstThenRefuse: a bucket lets Burst requests through at once, counting
// Remaining down, then refuses with a RetryAfter of about one emission interval;
// keys have buckets of their own. Both stores agree.
func TestBurstThenRefuse(t *testing.T) {
	t.Parallel()
	l := ratelimit.Limit{RPS: 0.5, Burst: 3} // refills one every 2 s
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for i := range 3 {
				res, err := s.Allow(ctx, "k1", l)
				if err != nil || !res.Allowed || res.Remaining != 2-i {
					t.Fatalf("request %d: %+v %v, want allowed with %d remaining", i+1, res, err, 2-i)
				}
			}
			res, err := s.Allow(ctx, "k1", l)
			if err != nil || res.Allowed || res.Remaining != 0 {
				t.Fatalf("4th: %+v %v, want refused", res, err)
			}
			if res.RetryAfter <= time.Second || res.RetryAfter > 2*time.Second || res.ResetAfter > 6*time.Second+100*time.Millisecond {
				t.Errorf("4th: RetryAfter %s, ResetAfter %s; want about 2 s and at most 6 s", res.RetryAfter, res.ResetAfter)
			}
			if res, _ := s.Allow(ctx, "k2", l); !res.Allowed || res.Remaining != 2 {
				t.Errorf("another key: %+v, want its own full bucket", res)
			}
		})
	}
	if w := l.Window(); w != 6*time.Second {
		t.Errorf("Window() = %s, want 6s (3 requests at 0.5/s)", w)
	}
}

// BenchmarkAllow is the cost of one check in each store, alone.
func BenchmarkAllow(b *testing.B) {
	l := ratelimit.Limit{RPS: 1e9, Burst: 1e9}
	for name, s := range stores(b) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Allow(context.Background(), "bench", l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLeasesNeverOverAdmit: three instances sharing a generous limit through Redis
// take requests from the bucket in leases; hammered together they admit no more than
// the burst plus what refilled meanwhile, and not much less.
func TestLeasesNeverOverAdmit(t *testing.T) {
	t.Parallel()
	insts := instances(t, 3)
	l := ratelimit.Limit{RPS: 200, Burst: 100} // leases of 10
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 600 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := insts[i%3].Allow(context.Background(), "hammered", l)
			if err != nil {
				t.Error(err)
				return
			}
			if res.Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	refilled := int(time.Since(start).Seconds()*l.RPS) + 1
	if allowed > l.Burst+refilled {
		t.Errorf("%d admitted, more than the burst %d plus %d refilled", allowed, l.Burst, refilled)
	}
	if allowed < l.Burst-3*10 {
		t.Errorf("%d admitted, want about the burst %d (at most 3 leases of 10 stranded)", allowed, l.Burst)
	}
	t.Logf("%d admitted of 600 (burst %d, %d refilled meanwhile)", allowed, l.Burst, refilled)
}

// TestLeasesInAnyWindow: instances that keep sending faster than a shared limit admit,
// in any window of time, at most what the bucket admits in it — the burst plus the
// refill — plus the documented slack: one lease per instance (README, REDIS_URL), as
// a lease taken before the window may be spent in it. Windows from 50 ms to 1 s, over
// two seconds of paced senders on every instance.
func TestLeasesInAnyWindow(t *testing.T) {
	t.Parallel()
	const n, senders = 3, 4
	insts := instances(t, n)
	l := ratelimit.Limit{RPS: 200, Burst: 60} // leases of min(200·50ms, 60/4) = 10
	const lease = 10
	var mu sync.Mutex
	var admitted []time.Time
	var wg sync.WaitGroup
	stop := time.Now().Add(2 * time.Second)
	for i := range n * senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 4 senders per instance, one request every 4 ms each: 3000/s in all
			for tick := time.NewTicker(4 * time.Millisecond); time.Now().Before(stop); <-tick.C {
				res, err := insts[i%n].Allow(context.Background(), "windowed", l)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Allowed {
					at := time.Now()
					mu.Lock()
					admitted = append(admitted, at)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(admitted, func(a, b time.Time) int { return a.Compare(b) })
	// A request is counted when Allow returned, after Redis took it: a few
	// milliseconds of the clocks' skew and of scheduling on a loaded machine are
	// allowed for as 20 ms more refill.
	const skew = 20 * time.Millisecond
	for _, w := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, time.Second} {
		bound := l.Burst + int(l.RPS*(w+skew).Seconds()) + n*lease
		most, j := 0, 0
		for i := range admitted {
			for admitted[i].Sub(admitted[j]) > w {
				j++
			}
			most = max(most, i-j+1)
		}
		if most > bound {
			t.Errorf("%d admitted within %s, more than the burst %d + refill + %d instances × lease %d = %d",
				most, w, l.Burst, n, lease, bound)
		}
		t.Logf("window %s: at most %d admitted (bound %d)", w, most, bound)
	}
	refilled := int(2.1 * l.RPS)
	if len(admitted) < l.Burst+refilled*9/10 {
		t.Errorf("%d admitted in 2 s, want about the burst %d plus %d refilled", len(admitted), l.Burst, refilled)
	}
}

// TestLeaseIsToppedUpAhead: a credential that keeps sending does not wait for Redis
// when its lease runs out, because the instance took the next part of the bucket
// while half the lease was left. Here Redis stops answering just after such a top-up
// has landed: a full lease's worth of further requests is still admitted, none of
// them waiting for Redis (each has 1 s; a request that had to ask would fail).
func TestLeaseIsToppedUpAhead(t *testing.T) {
	t.Parallel()
	if _, ok := stores(t)["redis"]; !ok {
		t.Skip("no Redis")
	}
	if testing.Short() {
		t.Skip("Redis fault through a proxy: skipped by -short, ./test runs it")
	}
	proxy := netfault.StartT(t, "127.0.0.1:6379")
	r, err := ratelimit.NewRedis("redis://"+proxy.Addr()+"/0", "riskapi-test-"+uuid.NewString()+":")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	l := ratelimit.Limit{RPS: 200, Burst: 100} // leases of 10, topped up at 5 left
	allow := func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if res, err := r.Allow(ctx, "steady", l); err != nil || !res.Allowed {
			t.Fatalf("request %d: %+v %v, want allowed from the lease", i, res, err)
		}
	}
	for i := 1; i <= 5; i++ { // the first takes a lease of 10; the fifth leaves 5 and starts a top-up
		allow(i)
	}
	time.Sleep(300 * time.Millisecond) // the top-up lands (a local Redis answers in < 1 ms)
	proxy.Stall()
	defer proxy.Restore()
	for i := 6; i <= 15; i++ { // 5 left + 5 topped up; the top-up started now is stalled
		allow(i)
	}
}

// instances returns n Redis stores sharing one prefix of the test's own (its keys
// deleted afterwards), as n riskapi instances share REDIS_URL; the test is skipped
// without Redis.
func instances(t *testing.T, n int) []*ratelimit.Redis {
	t.Helper()
	first, ok := stores(t)["redis"].(*ratelimit.Redis)
	if !ok {
		t.Skip("no Redis")
	}
	var insts []*ratelimit.Redis
	for range n {
		r, err := ratelimit.NewRedis("redis://127.0.0.1:6379/0", first.Prefix())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		insts = append(insts, r)
	}
	return insts
}

// redisStore returns a Redis store under a prefix of the test's own, through addr
// (127.0.0.1:6379, or a proxy in front of it); the test is skipped without Redis.
func redisStore(t *testing.T, addr string) *ratelimit.Redis {
	t.Helper()
	if _, ok := stores(t)["redis"]; !ok {
		t.Skip("no Redis")
	}
	r, err := ratelimit.NewRedis("redis://"+addr+"/0", "riskapi-test-"+uuid.NewString()+":")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestSaturatedKeyGetsItsWholeLimit: clients sending faster than the limit through
// three instances are admitted the burst plus the refill — not less (a lease must
// not waste part of the bucket) and not more — and RateLimit's remaining never
// exceeds the quota.
func TestSaturatedKeyGetsItsWholeLimit(t *testing.T) {
	t.Parallel()
	insts := instances(t, 3)
	l := ratelimit.Limit{RPS: 200, Burst: 100} // leases of 10
	var mu sync.Mutex
	allowed, overQuota := 0, 0
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(1500 * time.Millisecond)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				res, err := insts[i%3].Allow(context.Background(), "saturated", l)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if res.Allowed {
					allowed++
				}
				if res.Remaining > l.Burst {
					overQuota++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	bound := float64(l.Burst) + time.Since(start).Seconds()*l.RPS
	t.Logf("%d admitted; burst + refill = %.0f", allowed, bound)
	if float64(allowed) > bound+1 || float64(allowed) < 0.9*bound {
		t.Errorf("%d admitted, want between 90 %% of and the burst plus the refill, %.0f", allowed, bound)
	}
	if overQuota > 0 {
		t.Errorf("%d answers had RateLimit remaining above the quota %d", overQuota, l.Burst)
	}
}

// TestAbandonedRequestsDoNotSwitchTheLimitOff: a request whose client hung up while
// its limit was being checked is not Redis failing: however many there are, the
// next request is counted, not let through unlimited.
func TestAbandonedRequestsDoNotSwitchTheLimitOff(t *testing.T) {
	t.Parallel()
	r := redisStore(t, "127.0.0.1:6379")
	l := ratelimit.Limit{RPS: 1, Burst: 2} // no leases: every request asks Redis
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for range 5 {
		if _, err := r.Allow(gone, "abandoned", l); !errors.Is(err, context.Canceled) {
			t.Fatalf("Allow with a cancelled context: %v, want context.Canceled", err)
		}
	}
	for i, want := range []bool{true, true, false} {
		res, err := r.Allow(context.Background(), "victim", l)
		if err != nil || res.Allowed != want {
			t.Fatalf("request %d after the abandoned ones: %+v %v, want allowed %v", i+1, res, err, want)
		}
	}
}

// TestHungRedisCostsARequestOneTimeout: when Redis stops answering, requests of one
// key queued behind a round trip that timed out fail open at once instead of each
// waiting out a timeout of its own in turn.
func TestHungRedisCostsARequestOneTimeout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("Redis fault through a proxy: skipped by -short, ./test runs it")
	}
	proxy := netfault.StartT(t, "127.0.0.1:6379")
	r := redisStore(t, proxy.Addr())
	l := ratelimit.Limit{RPS: 200, Burst: 100}
	if _, err := r.Allow(context.Background(), "warm", l); err != nil { // a connection in the pool
		t.Fatal(err)
	}
	proxy.Stall()
	defer proxy.Restore()
	var wg sync.WaitGroup
	took := make([]time.Duration, 10)
	for i := range took {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if _, err := r.Allow(context.Background(), "hung", l); err == nil {
				t.Error("Allow succeeded with Redis stalled")
			}
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	if worst := slices.Max(took); worst > 500*time.Millisecond {
		t.Errorf("slowest of 10 requests took %s with Redis hung; want about one 100 ms timeout, not one each", worst)
	}
}

// TestShortStallDoesNotSwitchLimitsOff: a stall of Redis shorter than
// failingBeforePause fails the round trips in flight — those requests go
// uncounted — but the instance goes on limiting once Redis answers again, rather
// than letting every key through for a second.
func TestShortStallDoesNotSwitchLimitsOff(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("Redis fault through a proxy: skipped by -short, ./test runs it")
	}
	proxy := netfault.StartT(t, "127.0.0.1:6379")
	r := redisStore(t, proxy.Addr())
	l := ratelimit.Limit{RPS: 1, Burst: 2} // no leases: every request asks Redis
	proxy.Stall()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.Allow(context.Background(), "in-flight", l); err == nil {
				t.Error("Allow succeeded with Redis stalled")
			}
		}()
	}
	wg.Wait() // each failed after redisIOTimeout, all at about the same moment
	proxy.Restore()
	for i, want := range []bool{true, true, false} {
		res, err := r.Allow(context.Background(), "after-the-stall", l)
		if err != nil || res.Allowed != want {
			t.Fatalf("request %d after the stall: %+v %v, want allowed %v (limits still on)", i+1, res, err, want)
		}
	}
}
