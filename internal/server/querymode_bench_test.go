package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// BenchmarkQueryMode measures what riskapi's query modes cost (docs/deploying.md):
// requests per second of unkeyed and keyed writes and of a list read, with 16 and
// 64 concurrent clients, on one PostgreSQL database reached several ways: directly
// with the URL asking for pgx's statement cache (default_query_exec_mode=
// cache_statement), directly with pgx's exec mode (text parameters, no cache),
// directly as riskapi connects by default (DATABASE_POOLER unset: statements
// prepared), directly as riskapi connects with DATABASE_POOLER=transaction (unnamed
// statements with cached descriptions), and — when TEST_PGBOUNCER_URL names one —
// through PgBouncer with DATABASE_POOLER=transaction.
// The ways are alternated in short slices so that noise on a shared machine falls
// on each alike; it reports each rate, its ratio to the statement cache's (issue
// 44's goal: riskapi/cache ≥ 0.95), and the pooler's ratio to riskapi's direct
// connections in the same mode (pooler/direct).
//
// Run: TEST_DATABASE_URL=postgres://… [TEST_PGBOUNCER_URL=postgres://…] \
// go test -run '^$' -bench QueryMode -benchtime 1x ./internal/server/
func BenchmarkQueryMode(b *testing.B) {
	if !dbtest.Postgres() {
		b.Skip("query modes are PostgreSQL's")
	}
	direct := dbtest.DirectURL(b)
	type way struct{ name, url, pooler string }
	ways := []way{
		{"cache", direct + sep(direct) + "default_query_exec_mode=cache_statement", ""},
		{"exec", direct + sep(direct) + "default_query_exec_mode=exec", ""},
		{"riskapi", direct, ""},
		{"txmode", direct, database.PoolerTransaction},
	}
	if dbtest.Pooled() {
		ways = append(ways, way{"pooler", dbtest.ViaPooler(b, direct), database.PoolerTransaction})
	}
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			envs := make([]*apitest.Env, len(ways))
			keys := make([]string, len(ways))
			for i, w := range ways {
				envs[i] = apitest.New(b, func(c *config.Config) {
					c.Database.URL, c.Database.Pooler, c.Database.MaxConns = w.url, w.pooler, 20
				})
				keys[i] = envs[i].Tenant(fmt.Sprintf("Bench %s %d", w.name, clients)).Key
			}
			rates := map[string]float64{}
			for b.Loop() {
				for range 3 {
					for i, w := range ways {
						for _, kind := range []string{"unkeyed", "keyed", "list"} {
							rates[w.name+"/"+kind] += rate(b, envs[i], keys[i], kind, clients)
						}
					}
				}
			}
			for _, w := range ways {
				for _, kind := range []string{"unkeyed", "keyed", "list"} {
					r := rates[w.name+"/"+kind]
					b.ReportMetric(r/3/float64(b.N), w.name+"-"+kind+"-req/s")
					if w.name != "cache" {
						b.ReportMetric(r/rates["cache/"+kind], w.name+"/cache-"+kind)
					}
					if w.name == "pooler" { // PgBouncer against direct connections, both in transaction mode
						b.ReportMetric(r/rates["txmode/"+kind], "pooler/direct-"+kind)
					}
				}
			}
		})
	}
}

// rate runs clients goroutines sending kind requests for a fixed slice and returns
// the answered requests per second.
func rate(b *testing.B, env *apitest.Env, key, kind string, clients int) float64 {
	const slice = 500 * time.Millisecond
	body := map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party", "likelihood": 3, "impact": 4}
	var done, seq atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(slice)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				r := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: key, JSON: body}
				want := 201
				switch kind {
				case "keyed":
					r.Header = http.Header{"Idempotency-Key": {fmt.Sprintf("qm-%d-%d", time.Now().UnixNano(), seq.Add(1))}}
				case "list":
					r, want = apitest.Request{Method: "GET", Path: "/v2/risks?limit=20", Bearer: key}, 200
				}
				if res := env.Do(r); res.Code != want {
					b.Errorf("%s: %d %s", kind, res.Code, res.Body)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / slice.Seconds()
}

// sep is the separator that appends a query parameter to u.
func sep(u string) string {
	if strings.Contains(u, "?") {
		return "&"
	}
	return "?"
}
