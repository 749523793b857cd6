package changes_test

import (
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
)

// BenchmarkMembers: splitting a risk-sized view into its members, as every write's
// audit diff does twice (docs/performance.md, issue 44).
func BenchmarkMembers(b *testing.B) {
	type owner struct {
		UserID *string `json:"userId"`
		Name   string  `json:"name"`
	}
	five, three := 5, 3
	user := "usr_0193b2c4d5e67f8091a2b3c4d5e6f708"
	review := "2027-03-01"
	view := struct {
		ID, Object, Title, Description, Category, Status string
		Owner                                            owner
		Likelihood, Impact, RiskScore                    *int
		ReviewDate                                       *string
		Metadata                                         map[string]string
		Version                                          int64
		CreatedAt, UpdatedAt                             time.Time
		Livemode                                         bool
	}{"risk_0193b2c4d5e67f8091a2b3c4d5e6f708", "risk", "Vendor outage takes payments down", "The payment provider's single region failed twice this year.",
		"vendors", "open", owner{&user, "ann@example.com"}, &five, &three, &five, &review,
		map[string]string{"ticket": "SEC-42", "team": "payments"}, 7, time.Now(), time.Now(), true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := changes.Members(view); err != nil {
			b.Fatal(err)
		}
	}
}
