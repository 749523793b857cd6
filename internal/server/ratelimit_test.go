package server_test

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

var rateLimitField = regexp.MustCompile(`^"credential";r=(\d+)(?:;t=(\d+))?$`)

// remaining reads r of a response's RateLimit field.
func remaining(t *testing.T, res *apitest.Response) int {
	t.Helper()
	m := rateLimitField.FindStringSubmatch(res.Header().Get("RateLimit"))
	if m == nil {
		t.Fatalf("RateLimit = %q, want \"credential\";r=N[;t=N]", res.Header().Get("RateLimit"))
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// reset reads t of a response's RateLimit field (-1 when absent).
func reset(t *testing.T, res *apitest.Response) int {
	t.Helper()
	remaining(t, res)
	m := rateLimitField.FindStringSubmatch(res.Header().Get("RateLimit"))
	if m[2] == "" {
		return -1
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// TestRateLimitFields: rate-limited routes tell the client its quota and what is
// left of it (IETF httpapi RateLimit fields): RateLimit-Policy names the burst and
// the seconds it takes to refill, RateLimit counts down with each request and is on
// the 429 too, next to Retry-After. Its t is the seconds until more quota arrives
// (draft-ietf-httpapi-ratelimit-headers-10), here one request every half second, not
// until the whole burst is back (-09: 2 s once the burst of 4 is spent); on a 429 it
// is Retry-After. Sign-in has its own policy.
func TestRateLimitFields(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.RateLimit.RPS, c.RateLimit.Burst = 2, 4 })
	a := env.Tenant("Acme")
	for i := range 4 {
		r := env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200)
		if got := r.Header().Get("RateLimit-Policy"); got != `"credential";q=4;w=2` {
			t.Fatalf("RateLimit-Policy = %q, want \"credential\";q=4;w=2", got)
		}
		if n := remaining(t, r); n != 3-i && n != 4-i { // a refill may land between two requests
			t.Errorf("request %d: r=%d, want %d", i+1, n, 3-i)
		}
		if s := reset(t, r); s != 1 {
			t.Errorf("request %d: t=%d, want 1 (the next request's worth in at most 0.5 s)", i+1, s)
		}
	}
	r := env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key})
	if r.Code == 429 {
		checkRetryAfter(t, r)
		if remaining(t, r) != 0 || strconv.Itoa(reset(t, r)) != r.Header().Get("Retry-After") {
			t.Errorf("429 with RateLimit %q, Retry-After %q: want r=0 and t = Retry-After",
				r.Header().Get("RateLimit"), r.Header().Get("Retry-After"))
		}
	}
	s := env.Do(apitest.Request{Method: "POST", Path: "/v1/sessions", JSON: map[string]string{"email": a.Email, "password": a.Password}}).Expect(201)
	if got := s.Header().Get("RateLimit-Policy"); got != `"sign-in";q=20;w=20` || !strings.HasPrefix(s.Header().Get("RateLimit"), `"sign-in";r=19;`) {
		t.Errorf("sign-in RateLimit-Policy %q, RateLimit %q", got, s.Header().Get("RateLimit"))
	}
	// Unlimited routes carry none.
	if h := env.Do(apitest.Request{Method: "GET", Path: "/healthz"}).Header().Get("RateLimit-Policy"); h != "" {
		t.Errorf("/healthz RateLimit-Policy = %q", h)
	}
}

// redisURL is the Redis the shared-limit tests use (TEST_REDIS_URL, default the
// local one). Each test writes only keys under a prefix of its own, and deletes them.
func redisURL(t testing.TB) string {
	t.Helper()
	url, ok := redisReachable()
	if !ok {
		t.Skipf("no Redis at %s", url)
	}
	return url
}

// redisReachable is the local Redis's URL and whether it answers a ping.
func redisReachable() (string, bool) {
	url := "redis://127.0.0.1:6379/0"
	opt, _ := redis.ParseURL(url)
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return url, c.Ping(ctx).Err() == nil
}

// uniquePrefix returns a Redis key prefix of this test's own and deletes its keys
// when the test ends (never a FLUSH: the Redis may be shared).
func uniquePrefix(t testing.TB, url string) string {
	prefix := "riskapi-test-" + uuid.NewString() + ":"
	t.Cleanup(func() {
		opt, _ := redis.ParseURL(url)
		c := redis.NewClient(opt)
		defer c.Close()
		ctx := context.Background()
		keys, _ := c.Keys(ctx, "*"+prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return prefix
}

// TestSharedRateLimitAcrossInstances: three instances with REDIS_URL enforce one
// limit between them — a credential's burst spent on any instance is spent on all —
// where counting alone each would allow three times as much.
func TestSharedRateLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	url := redisURL(t)
	prefix := uniquePrefix(t, url)
	shared := func(c *config.Config) {
		c.RateLimit.RPS, c.RateLimit.Burst = slowRefill, 6
		c.RateLimit.RedisURL, c.RateLimit.RedisPrefix = url, prefix
	}
	first := apitest.New(t, shared)
	a := first.Tenant("Acme")
	envs := []*apitest.Env{first}
	for range 2 { // two more instances on the same database and Redis
		envs = append(envs, apitest.New(t, shared, func(c *config.Config) { c.Database.URL = first.App.Config.Database.URL }))
	}
	var mu sync.Mutex
	allowed, limited := 0, 0
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := envs[i%3].Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key})
			mu.Lock()
			defer mu.Unlock()
			switch r.Code {
			case 200:
				allowed++
			case 429:
				limited++
			default:
				t.Errorf("instance %d: %d %s", i%3, r.Code, r.Body)
			}
		}()
	}
	wg.Wait()
	if allowed != 6 || limited != 24 {
		t.Errorf("30 requests over 3 instances: %d allowed, %d limited; want the one burst of 6 allowed", allowed, limited)
	}
}

// TestRateLimitFailsOpen: with Redis unreachable, requests — writes above all — go
// through unlimited (a rate limit must not take the API down), each is counted in
// riskapi_rate_limit_errors_total, and a warning is logged (not once per request).
func TestRateLimitFailsOpen(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port that refuses once closed
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("redis://%s/0", ln.Addr())
	ln.Close()
	env := apitest.New(t, func(c *config.Config) {
		c.RateLimit.RPS, c.RateLimit.Burst = slowRefill, 1
		c.RateLimit.RedisURL = dead
	})
	a := env.Tenant("Acme")
	for i := range 5 {
		env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": fmt.Sprint("w", i)}}).Expect(201)
	}
	metrics := env.Do(apitest.Request{Method: "GET", Path: "/metrics"}).Expect(200).Body.String()
	if !strings.Contains(metrics, `riskapi_rate_limit_errors_total{policy="credential"} 5`) {
		t.Errorf("/metrics lacks riskapi_rate_limit_errors_total{policy=\"credential\"} 5")
	}
	if n := strings.Count(env.LogText(), "rate limit store unreachable"); n != 1 {
		t.Errorf("%d warnings for 5 requests in a row, want 1", n)
	}
}
