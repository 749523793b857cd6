package followuphttp_test

import (
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/due"
)

// TestDueNoticesSweptAfterRetention: an item overdue for longer than the retention
// when first found is not noticed; the sweep removes notices past the retention,
// and the item they were about — still overdue, never reviewed — is not noticed
// again: the finder no longer looks that far back.
func TestDueNoticesSweptAfterRetention(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	day := today(env)
	date := func(days int) string { return day.AddDate(0, 0, days).Format("2006-01-02") }
	recent := newRisk(t, env, a.Key, map[string]any{"title": "late", "reviewDate": date(-2)})
	newRisk(t, env, a.Key, map[string]any{"title": "ancient", "reviewDate": date(-due.RetentionDays - 5)})
	notices := func() int64 {
		var n int64
		if err := env.App.DB.DB.Table("due_notices").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	run := func() {
		if _, err := env.App.Due.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	run()
	got := eventsOfType(t, env, a.Key, "risk.review_overdue")
	if len(got) != 1 || got[0]["data"].(map[string]any)["object"].(map[string]any)["id"] != recent || notices() != 1 {
		t.Fatalf("%d review_overdue events, %d notices; want 1 each, about %s only", len(got), notices(), recent)
	}

	// A sweep within the retention keeps the notice.
	if _, err := env.App.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := notices(); n != 1 {
		t.Fatalf("%d notices after a sweep within the retention, want 1", n)
	}
	env.Clock.Advance((due.RetentionDays + 2) * 24 * time.Hour)
	if _, err := env.App.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := notices(); n != 0 {
		t.Fatalf("%d notices after the retention, want 0", n)
	}
	before := len(eventsOfType(t, env, a.Key, "risk.review_overdue"))
	run()
	run()
	if after := len(eventsOfType(t, env, a.Key, "risk.review_overdue")); after != before || notices() != 0 {
		t.Errorf("after the sweep the finder emitted %d more review_overdue events (%d notices), want none", after-before, notices())
	}
}
