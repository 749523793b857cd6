package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// BenchmarkRateLimitCost measures what the rate limit check adds to an unkeyed write
// (POST /v2/risks through the whole router, on the store under test): three servers
// on one database — limits off, counted in memory, shared through Redis — take
// writes in turn, so machine noise falls on all three alike. It reports each one's
// mean latency and the ratios to "off" (goal for Redis: ≤ 1.05), for two clients:
//
//	busy-key      one API key writing as fast as it can under a 2000/s limit: Redis
//	              is asked once per lease (ratelimit.Redis), not per request
//	8-quiet-keys  writes rotating over 8 keys at the default 100/s: leases of 5,
//	              topped up in the background once half is spent
//
// Run: go test -run '^$' -bench RateLimitCost -benchtime 2000x ./internal/server/
// (and with TEST_DATABASE_URL=postgres://… for PostgreSQL). Needs Redis on
// 127.0.0.1:6379; keys go under a prefix of the run's own.
func BenchmarkRateLimitCost(b *testing.B) {
	b.Run("busy-key", func(b *testing.B) { benchLimitCost(b, 1, 2000) })
	b.Run("8-quiet-keys", func(b *testing.B) { benchLimitCost(b, 8, 100) })
}

func benchLimitCost(b *testing.B, benchKeys int, benchRPS float64) {
	url := redisURL(b)
	prefix := uniquePrefix(b, url)
	off := apitest.New(b)
	shared := func(c *config.Config) { c.Database.URL = off.App.Config.Database.URL }
	limited := func(c *config.Config) {
		c.RateLimit = config.Default().RateLimit
		c.RateLimit.RPS, c.RateLimit.Burst = benchRPS, 2*int(benchRPS)
	}
	mem := apitest.New(b, shared, limited)
	red := apitest.New(b, shared, limited, func(c *config.Config) { c.RateLimit.RedisURL, c.RateLimit.RedisPrefix = url, prefix })
	var keys []string
	for i := range benchKeys {
		keys = append(keys, off.Tenant(fmt.Sprint("Bench ", i)).Key)
	}
	body := map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party", "likelihood": 3, "impact": 4}
	envs := []*apitest.Env{off, mem, red}
	took := make([]time.Duration, len(envs))
	var n int
	write := func(i int) {
		start := time.Now()
		res := envs[i].Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: keys[n%len(keys)], JSON: body})
		took[i] += time.Since(start)
		if res.Code != 201 || (i > 0 && res.Header().Get("RateLimit") == "") {
			b.Fatalf("server %d: %d %q %s", i, res.Code, res.Header().Get("RateLimit"), res.Body)
		}
	}
	for i := range envs { // warm up: connections, Redis script cache
		write(i)
		took[i] = 0
	}
	b.ResetTimer()
	for ; b.Loop(); n++ {
		for j := range envs { // rotate who goes first
			write((n + j) % len(envs))
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(per(took[0]), "off-ns/op")
	b.ReportMetric(per(took[1]), "memory-ns/op")
	b.ReportMetric(per(took[2]), "redis-ns/op")
	b.ReportMetric(float64(took[1])/float64(took[0]), "memory/off")
	b.ReportMetric(float64(took[2])/float64(took[0]), "redis/off")
}
