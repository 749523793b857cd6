package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
)

// deepBody is a JSON object about size bytes long nested depth levels deep, each
// level's nested member first and a padding member after it, so that canonical
// order differs from the order written at every level.
func deepBody(depth, size int) string {
	pad := strings.Repeat("p", max(0, size/depth-len(`{"z":,"a":""}`)))
	var sb strings.Builder
	for range depth {
		sb.WriteString(`{"z":`)
	}
	sb.WriteString(`0`)
	for range depth {
		sb.WriteString(`,"a":"` + pad + `"}`)
	}
	return sb.String()
}

// BenchmarkDeepBodyCPU: the CPU a 1 MiB JSON body nested 10,000 deep costs keyed
// (canonicalised for the fingerprint, then decoded) against unkeyed (decoded only),
// as the ratio keyed-cpu/unkeyed-cpu of this process's CPU time over the same
// requests. A canonicaliser that copied each subtree into its parent made it
// quadratic in the depth: seconds of CPU for one keyed body (issue 25, item 2). The
// contract allows a few times what parsing costs; the benchmark fails above 3.
func BenchmarkDeepBodyCPU(b *testing.B) {
	env := apitest.New(b)
	a := env.Tenant("Acme")
	// Under a known member, so that the unkeyed decoder reads it all (a body refused
	// at its first member would compare canonicalising it with reading nothing).
	body := `{"description":` + deepBody(9_999, 1<<20) + `}`
	meter := cpuMeter{db: env.App.DB}
	send := func(key string) time.Duration {
		req := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: body}
		if key != "" {
			req.Header = http.Header{"Idempotency-Key": {key}}
		}
		before, _ := meter.read()
		res := env.Do(req)
		after, _ := meter.read()
		if res.Code != http.StatusBadRequest {
			b.Fatalf("deep body: %d %s, want 400 (a description is a string)", res.Code, res.Body.String())
		}
		return after - before
	}
	send("") // warm: connections, buffers
	var keyed, unkeyed time.Duration
	for i := 0; b.Loop(); i++ {
		unkeyed += send("")
		keyed += send(fmt.Sprintf("deep-%d-%d", time.Now().UnixNano(), i))
	}
	ratio := float64(keyed) / float64(max(unkeyed, time.Millisecond))
	b.ReportMetric(float64(keyed.Microseconds())/float64(b.N), "keyed-cpu-µs/op")
	b.ReportMetric(float64(unkeyed.Microseconds())/float64(b.N), "unkeyed-cpu-µs/op")
	b.ReportMetric(ratio, "keyed/unkeyed-cpu")
	if ratio > 3 {
		b.Errorf("a keyed deep body cost %.1f× the CPU of the same body unkeyed, want at most 3×", ratio)
	}
}
