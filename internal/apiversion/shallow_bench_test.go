package apiversion_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apiversion"
)

// BenchmarkPageRendering is the CPU of rendering a page of 100 risks in 2026-12-01:
// decoding the page whole against rendering its bytes (the changes' Members).
// Run: go test -run '^$' -bench PageRendering ./internal/apiversion/
func BenchmarkPageRendering(b *testing.B) {
	var items []string
	for i := range 100 {
		items = append(items, fmt.Sprintf(`{"id":"risk_%032d","title":"risk %d","description":"a description of some length, as a register's risks have","category":"","likelihood":2,"impact":3,"riskScore":6,"status":"open","owner":{"userId":null,"name":"ann"},"treatment":null,"reviewDate":null,"reviewEvery":null,"residualLikelihood":null,"residualImpact":null,"residualScore":null,"metadata":{"k":"v"},"version":1,"createdAt":"2026-12-06T13:00:00Z","updatedAt":"2026-12-06T13:00:00Z","livemode":true}`, i, i))
	}
	page := []byte(`{"data":[` + strings.Join(items, ",") + `],"hasMore":false,"nextCursor":null}`)
	deep := apiversion.WholeDecode(apiversion.API)
	for name, s := range map[string]*apiversion.Set{"whole": deep, "shallow": apiversion.API} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, err := s.ResponseBody(apiversion.V20261201, "risk", page); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
