package auditstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/sweep"
)

func entry(tenant string, at time.Time) *audit.Entry {
	at = at.UTC().Truncate(time.Microsecond)
	return &audit.Entry{ID: ids.NewAt(ids.Audit, at), TenantID: tenant, OccurredAt: at,
		Actor: audit.Actor{Type: "system"}, Action: "tenant.disabled", Target: audit.Target{Type: "tenant", ID: tenant},
		Changes: map[string]audit.Field{"disabled": {From: json.RawMessage("false"), To: json.RawMessage("true")}}}
}

// TestEntriesAreAppendOnly: the table refuses to change an entry on both stores,
// whoever asks; reading one back gives what was written.
func TestEntriesAreAppendOnly(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	st := auditstore.New(db.DB)
	ctx := context.Background()
	e := entry("ten_a", time.Now())
	if err := st.Insert(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE audit_log SET action = 'risk.created' WHERE id = ?", e.ID).Error; err == nil {
		t.Fatal("an entry was changed")
	}
	got, _, err := st.List(ctx, "ten_a", audit.Filter{Limit: 10})
	if err != nil || len(got) != 1 {
		t.Fatalf("list: %v %v", got, err)
	}
	if a, b := mustJSON(t, got[0]), mustJSON(t, e); a != b {
		t.Errorf("read back %s, wrote %s", a, b)
	}
}

// TestRecordRollsBackWithItsChange: an entry recorded in a unit of work that rolls
// back is gone with it; one that commits stays.
func TestRecordRollsBackWithItsChange(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	st := auditstore.New(db.DB)
	point := changes.Point{Tx: database.NewRunner(db.DB), Recorder: audit.Recorder{Store: st}}
	ctx := context.Background()
	write := func(ctx context.Context) (changes.Change, error) {
		return changes.Change{TenantID: "ten_a", Action: "tenant.enabled", Target: changes.Target{Type: "tenant", ID: "ten_a"}}, nil
	}
	failing := func(ctx context.Context) error {
		if err := point.Write(ctx, write); err != nil {
			return err
		}
		return context.Canceled // the caller's unit of work fails after the record
	}
	if err := database.NewRunner(db.DB).InTx(ctx, failing); err == nil {
		t.Fatal("the failing unit of work succeeded")
	}
	if err := point.Write(ctx, write); err != nil {
		t.Fatal(err)
	}
	got, _, err := st.List(ctx, "ten_a", audit.Filter{Limit: 10})
	if err != nil || len(got) != 1 {
		t.Fatalf("entries %v (%v), want the committed one only", got, err)
	}
}

// TestSweepDeletesOnlyExpiredEntries: the sweep deletes, in batches, the entries
// older than its TTL, of every tenant, and nothing newer.
func TestSweepDeletesOnlyExpiredEntries(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	st := auditstore.New(db.DB)
	ctx := context.Background()
	now := time.Now()
	for i := range 7 {
		for _, tenant := range []string{"ten_a", "ten_b"} {
			if err := st.Insert(ctx, entry(tenant, now.Add(-48*time.Hour-time.Duration(i)*time.Minute))); err != nil {
				t.Fatal(err)
			}
		}
	}
	fresh := entry("ten_a", now.Add(-time.Hour))
	if err := st.Insert(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	sw := &sweep.ByAge{Name: "audit log sweep", DeleteBefore: st.DeleteBefore, TTL: 24 * time.Hour, Pacing: sweep.Pacing{Size: 3}, Now: func() time.Time { return now }}
	n, err := sw.Sweep(ctx)
	if err != nil || n != 14 {
		t.Fatalf("swept %d (%v), want 14", n, err)
	}
	for _, tenant := range []string{"ten_a", "ten_b"} {
		got, _, err := st.List(ctx, tenant, audit.Filter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"ten_a": 1, "ten_b": 0}[tenant]; len(got) != want || (want == 1 && got[0].ID != fresh.ID) {
			t.Errorf("%s keeps %d entries, want %d", tenant, len(got), want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
