package webhookstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/webhookstore"
)

// TestSecretsAreSealed: a source's secret is stored sealed and reads back whole; a
// secret stored before sealing is sealed by SealLegacy and still verifies; a sealed
// value moved to another source, or read with another key, does not open.
func TestSecretsAreSealed(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t)
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	st, err := webhookstore.New(db, key)
	if err != nil {
		t.Fatal(err)
	}
	st.Recording(audit.Recorder{Store: auditstore.New(db.DB)})
	column := func(id string) string {
		var v string
		if err := db.Raw("SELECT secret FROM webhook_sources WHERE id = ?", id).Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	// A source is found only while its tenant exists and is enabled.
	if err := db.Exec("INSERT INTO tenants (id, name, created_at) VALUES ('ten_1', 'Acme', ?)", now).Error; err != nil {
		t.Fatal(err)
	}
	src, err := webhooks.NewSource("ten_1", "scanner", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	if v := column(src.ID); !strings.HasPrefix(v, "v1.") || strings.Contains(v, src.Secret[len(webhooks.SecretPrefix):]) {
		t.Errorf("stored %q is not sealed", v)
	}
	if got, err := st.SourceByName(ctx, "scanner"); err != nil || got.Secret != src.Secret {
		t.Errorf("read back %+v, %v; want the secret", got, err)
	}

	legacy, _ := webhooks.NewSource("ten_1", "legacy", now)
	if err := db.Exec("INSERT INTO webhook_sources (id, tenant_id, source, secret, created_at) VALUES (?, ?, ?, ?, ?)",
		legacy.ID, legacy.TenantID, legacy.Name, legacy.Secret, now).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := st.SealLegacy(ctx); err != nil || n != 1 {
		t.Fatalf("SealLegacy = %d, %v; want 1", n, err)
	}
	if v := column(legacy.ID); !strings.HasPrefix(v, "v1.") {
		t.Errorf("legacy secret not sealed: %q", v)
	}
	if got, err := st.SourceByName(ctx, "legacy"); err != nil || got.Secret != legacy.Secret {
		t.Errorf("legacy read back %+v, %v", got, err)
	}
	if n, err := st.SealLegacy(ctx); err != nil || n != 0 {
		t.Errorf("second SealLegacy = %d, %v; want 0", n, err)
	}

	// Moved to another source: does not open.
	if err := db.Exec("UPDATE webhook_sources SET secret = ? WHERE id = ?", column(src.ID), legacy.ID).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := st.SourceByName(ctx, "legacy"); err == nil {
		t.Errorf("a sealed secret moved to another source opened")
	}
	other, err := webhookstore.New(db, bytes.Repeat([]byte{8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.SourceByName(ctx, "scanner"); err == nil {
		t.Errorf("a sealed secret opened with another key")
	}
}
