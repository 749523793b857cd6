package mcpserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/riskapi/riskapi/internal/apitest"
)

// BenchmarkKeyedCreateMCPvsHTTP measures what the MCP envelope costs a keyed create:
// the same create_risk over MCP (the official SDK's client, one session per client)
// and POST /v2/risks with Idempotency-Key over HTTP, from 4 concurrent clients each,
// against one server over loopback on a fresh database of the store under test. The
// two kinds run in alternating slices of time, so that noise on this shared machine
// falls on both alike. It reports each rate, the ratio mcp/http, and the 1-minute
// load average at the end.
//
// Run (both stores — docs/performance.md):
//
//	go test -run '^$' -bench KeyedCreateMCPvsHTTP -benchtime 1x ./internal/mcpserver/
//	TEST_DATABASE_URL=postgres://… go test -run '^$' -bench KeyedCreateMCPvsHTTP -benchtime 1x ./internal/mcpserver/
func BenchmarkKeyedCreateMCPvsHTTP(b *testing.B) {
	const (
		clients = 4
		rounds  = 6
		slice   = time.Second
	)
	env := apitest.New(b)
	ten := env.Tenant("Bench")
	base := serverB(b, env)
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		sessions[i] = connectB(b, base, ten.Key)
	}
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	body := `{"title":"Vendor contract missing a DPA","category":"Third-Party","likelihood":3,"impact":4}`
	var seq atomic.Int64
	one := map[string]func(i int) error{
		"http": func(int) error {
			req, _ := http.NewRequest(http.MethodPost, base+"/v2/risks", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+ten.Key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-http-%08d", seq.Add(1)))
			resp, err := httpClient.Do(req)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				return fmt.Errorf("%d %s", resp.StatusCode, buf.String())
			}
			return nil
		},
		"mcp": func(i int) error {
			out, err := callErr(sessions[i], "create_risk", map[string]any{"idempotencyKey": fmt.Sprintf("bench-mcp-%08d", seq.Add(1)),
				"risk": map[string]any{"title": "Vendor contract missing a DPA", "category": "Third-Party", "likelihood": 3, "impact": 4}})
			if err == nil && out["__isError"] == true {
				err = fmt.Errorf("tool error %v", out)
			}
			return err
		},
	}
	run := func(kind string) float64 {
		var done atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		stop := start.Add(slice)
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					if err := one[kind](i); err != nil {
						b.Error(kind, err)
						return
					}
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(done.Load()) / time.Since(start).Seconds()
	}
	b.ResetTimer()
	for range b.N {
		rates := map[string]float64{}
		for r := range rounds {
			kinds := []string{"http", "mcp"}
			if r%2 == 1 {
				kinds = []string{"mcp", "http"}
			}
			for _, k := range kinds {
				rates[k] += run(k)
			}
		}
		b.ReportMetric(rates["http"]/rounds/float64(b.N), "http-req/s")
		b.ReportMetric(rates["mcp"]/rounds/float64(b.N), "mcp-req/s")
		b.ReportMetric(rates["mcp"]/rates["http"], "mcp/http")
	}
	b.ReportMetric(load1(), "load1")
}

// load1 is the 1-minute load average (0 where /proc/loadavg is missing).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}
