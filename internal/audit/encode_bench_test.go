package audit_test

import (
	"encoding/json"
	"testing"

	"github.com/riskapi/riskapi/internal/audit"
)

// BenchmarkEncodeChanges: a risk creation's changes, as every create's audit entry
// stores them (docs/performance.md, issue 44).
func BenchmarkEncodeChanges(b *testing.B) {
	c := map[string]audit.Field{}
	for k, v := range map[string]string{"title": `"Vendor outage takes payments down"`, "description": `"The provider's single region failed twice."`,
		"category": `"vendors"`, "status": `"open"`, "owner": `{"userId":"usr_0193b2c4d5e67f8091a2b3c4d5e6f708","name":"ann@example.com"}`,
		"likelihood": `5`, "impact": `3`, "riskScore": `15`, "reviewDate": `"2027-03-01"`, "metadata": `{"team":"payments","ticket":"SEC-42"}`} {
		c[k] = audit.Field{To: json.RawMessage(v)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := audit.EncodeChanges(c); err != nil {
			b.Fatal(err)
		}
	}
}
