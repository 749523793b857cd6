package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/risks/riskseed"
	"github.com/riskapi/riskapi/internal/tenants"
)

// fairEnvInt is the variable name's value, or def.
func fairEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// BenchmarkFairShare measures contract section 17's promise on costly reads, over
// real HTTP on the store under test: tenant A has FAIR_BENCH_ROWS risks (100,000)
// and keeps FAIR_BENCH_HOSTILE (32) costly reads in flight (q=zq&sort=title,
// category=none&sort=title, heatmap?category=x, in turn); tenant B alternates a
// plain list and a keyed create, FAIR_BENCH_OPS (200) of each, first alone, then
// beside A. It reports B's p99 of each, alone and beside A, their ratios (goal ≤ 3,
// or a p99 under 250 ms), and A's answers by status: 429 beyond its share, never a
// 5xx. TENANT_MAX_INFLIGHT is the default (8) unless FAIR_BENCH_LIMIT is set (0 turns
// the limit off, to see what it prevents), and INSTANCE_MAX_COSTLY is its default
// (half the CPUs) unless FAIR_BENCH_INSTANCE is set (0: off). Run once: -benchtime 1x.
func BenchmarkFairShare(b *testing.B) {
	rows, hostile, ops := fairEnvInt("FAIR_BENCH_ROWS", 100_000), fairEnvInt("FAIR_BENCH_HOSTILE", 32), fairEnvInt("FAIR_BENCH_OPS", 200)
	limit, instance := fairEnvInt("FAIR_BENCH_LIMIT", -1), fairEnvInt("FAIR_BENCH_INSTANCE", -1)
	env := apitest.New(b, func(c *config.Config) {
		if limit >= 0 {
			c.HTTP.TenantMaxInflight = limit
		}
		if instance >= 0 {
			c.HTTP.InstanceMaxCostly = instance
		}
		b.Logf("TENANT_MAX_INFLIGHT %d, INSTANCE_MAX_COSTLY %d", c.HTTP.TenantMaxInflight, c.HTTP.InstanceMaxCostly)
	})
	ctx := context.Background()
	seeded := time.Now()
	big, err := riskseed.Tenant(ctx, env.App.DB.DB, "hostile", rows)
	if err != nil {
		b.Fatal(err)
	}
	_, aKey, err := env.App.Tenants.CreateAPIKey(ctx, big, "ro", []tenants.Scope{tenants.ScopeRisksRead})
	if err != nil {
		b.Fatal(err)
	}
	bT := env.Tenant("Ordinary")
	b.Logf("seeded %d risks in %v", rows, time.Since(seeded).Round(time.Millisecond))
	srv := env.Server()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: hostile + 4}, Timeout: time.Minute}
	do := func(method, path, key, body, idem string) (int, time.Duration) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if body != "" {
			req, _ = http.NewRequest(method, srv.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, time.Since(start)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, time.Since(start)
	}
	var round atomic.Int64
	ordinary := func(phase string) (list, create []time.Duration) {
		for i := range ops {
			st, d := do("GET", "/v2/risks?limit=20", bT.Key, "", "")
			if st != http.StatusOK {
				b.Errorf("%s: B's list: %d", phase, st)
			}
			list = append(list, d)
			st, d = do("POST", "/v2/risks", bT.Key, `{"title":"ordinary write","likelihood":2,"impact":3}`,
				fmt.Sprintf("fair-%s-%d-%d", phase, round.Add(1), i))
			if st != http.StatusCreated {
				b.Errorf("%s: B's keyed create: %d", phase, st)
			}
			create = append(create, d)
		}
		return list, create
	}
	b.ResetTimer()
	for b.Loop() {
		aloneList, aloneCreate := ordinary("alone")

		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		paths := []string{"/v2/risks?q=zq&sort=title", "/v2/risks?category=none&sort=title", "/v2/risks/heatmap?category=x"}
		for g := range hostile {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					st, _ := do("GET", paths[i%len(paths)], aKey, "", "")
					mu.Lock()
					statuses[st]++
					mu.Unlock()
					if st == http.StatusTooManyRequests {
						time.Sleep(time.Second) // Retry-After, within A's rate limit
					}
				}
			}()
		}
		time.Sleep(time.Second) // A's reads in flight
		besideList, besideCreate := ordinary("beside")
		close(stop)
		wg.Wait()

		for _, m := range []struct {
			name          string
			alone, beside []time.Duration
		}{{"list", aloneList, besideList}, {"create", aloneCreate, besideCreate}} {
			a, s := p99(m.alone), p99(m.beside)
			b.ReportMetric(float64(a.Microseconds())/1000, m.name+"-p99-alone-ms")
			b.ReportMetric(float64(s.Microseconds())/1000, m.name+"-p99-beside-ms")
			b.ReportMetric(float64(s)/float64(a), m.name+"-p99-ratio")
			b.Logf("B's %s p99: alone %v, beside A %v (%.2f×)", m.name, a.Round(time.Millisecond/10), s.Round(time.Millisecond/10), float64(s)/float64(a))
		}
		var fivexx int
		for st, n := range statuses {
			if st >= 500 || st == 0 {
				fivexx += n
			}
		}
		b.ReportMetric(float64(statuses[http.StatusOK]), "A-200")
		b.ReportMetric(float64(statuses[http.StatusTooManyRequests]), "A-429")
		b.ReportMetric(float64(fivexx), "A-5xx")
		b.Logf("A's answers by status: %v", statuses)
		if fivexx > 0 && limit != 0 {
			b.Errorf("A's costly reads got %d 5xx or failed connections", fivexx)
		}
	}
}

// p99 is the 99th percentile of ds.
func p99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}

// BenchmarkCostlyLimiterCost measures what the limit of costly reads costs tenant
// B's ordinary requests (a plain list, which the limiter only looks at): the same
// list through the whole router with TENANT_MAX_INFLIGHT at 8 and off, interleaved
// so that machine noise hits both alike. limiter-cost is on/off (goal ≤ 1.05).
func BenchmarkCostlyLimiterCost(b *testing.B) {
	on := apitest.New(b)
	off := apitest.New(b, func(c *config.Config) { c.HTTP.TenantMaxInflight = 0 })
	var keys [2]string
	for i, env := range []*apitest.Env{on, off} {
		t := env.Tenant("Ordinary")
		keys[i] = t.Key
		for j := range 50 {
			env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: t.Key,
				JSON: map[string]any{"title": fmt.Sprintf("risk %d", j)}}).Expect(http.StatusCreated)
		}
	}
	var spent [2]time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			j := (i + k) % 2 // alternate which goes first
			env := []*apitest.Env{on, off}[j]
			start := time.Now()
			res := env.Do(apitest.Request{Method: "GET", Path: "/v2/risks?limit=20&status=open", Bearer: keys[j]})
			spent[j] += time.Since(start)
			if res.Code != http.StatusOK {
				b.Fatalf("%d %s", res.Code, res.Body)
			}
		}
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "on-ns/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "off-ns/op")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "limiter-cost")
}
