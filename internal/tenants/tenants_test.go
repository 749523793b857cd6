package tenants_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/audit/auditstore"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/tenants/tenantstore"
)

func newService(t *testing.T) (*tenants.Service, *apitest.StoppedClock, func(query string, args ...any) []string) {
	t.Helper()
	db := dbtest.Open(t)
	c := apitest.NewStoppedClock(time.Now())
	rows := func(query string, args ...any) []string {
		var out []string
		if err := db.Raw(query, args...).Scan(&out).Error; err != nil {
			t.Fatal(err)
		}
		return out
	}
	return tenants.NewService(tenantstore.New(db.DB, audit.Recorder{Store: auditstore.New(db.DB)}), bcrypt.MinCost, c.Now), c, rows
}

// inputField returns the one field a VALIDATION_FAILED problem names, or "".
func inputField(err error) string {
	if p := problem.As(err); p != nil && p.Code == problem.ValidationFailed && len(p.Errors) == 1 {
		return p.Errors[0].Field
	}
	return ""
}

func TestTenantsAndUsers(t *testing.T) {
	t.Parallel()
	svc, _, rows := newService(t)
	ctx := context.Background()

	ten, err := svc.CreateTenant(ctx, "  Acme  ")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^ten_[0-9a-f]{32}$`).MatchString(ten.ID) || ten.Name != "Acme" {
		t.Errorf("tenant = %+v, want ten_ ID and the trimmed name", ten)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("n", 201)} {
		if _, err := svc.CreateTenant(ctx, bad); inputField(err) != "name" {
			t.Errorf("CreateTenant(%q) = %v, want an input error on name", bad, err)
		}
	}

	u, err := svc.CreateUser(ctx, ten.ID, " Alice@Example.com ", "correct horse", tenants.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tenants.User{ID: u.ID, TenantID: ten.ID, Email: "alice@example.com", Role: tenants.RoleMember}, u,
		cmpIgnoreTime); diff != "" || !strings.HasPrefix(u.ID, "usr_") {
		t.Errorf("user (-want +got):\n%s", diff)
	}
	hashes := rows("SELECT password_hash FROM users WHERE id = ?", u.ID)
	if len(hashes) != 1 || strings.Contains(hashes[0], "correct horse") || !strings.HasPrefix(hashes[0], "$2") {
		t.Errorf("stored password %q is not a bcrypt hash", hashes)
	}

	tests := []struct {
		name, tenant, email, password string
		wantErr                       error
		wantField                     string
	}{
		{"taken, other case", ten.ID, "ALICE@example.com", "another pw", tenants.ErrEmailTaken, ""},
		{"no tenant", "ten_0193b2c4d5e67f8091a2b3c4d5e6f708", "bob@example.com", "password1", tenants.ErrTenantNotFound, ""},
		{"bad email", ten.ID, "not an email", "password1", nil, "email"},
		{"email with a name", ten.ID, "Bob <bob@example.com>", "password1", nil, "email"},
		{"short password", ten.ID, "bob@example.com", "1234567", nil, "password"},
		{"password over bcrypt's limit", ten.ID, "bob@example.com", strings.Repeat("p", 73), nil, "password"},
		// Counted in characters, as the spec's minLength does: 7 characters in 14 bytes
		// are too short; 40 characters in 80 bytes pass the count but not bcrypt's 72 bytes.
		{"short password in two-byte characters", ten.ID, "bob@example.com", strings.Repeat("é", 7), nil, "password"},
		{"72 bytes passed in fewer characters", ten.ID, "bob@example.com", strings.Repeat("é", 40), nil, "password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := svc.CreateUser(ctx, tt.tenant, tt.email, tt.password, tenants.RoleAdmin)
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantField != "" && inputField(err) != tt.wantField {
				t.Errorf("err = %v, want an input error on %s", err, tt.wantField)
			}
		})
	}

	got, err := svc.Authenticate(ctx, "ALICE@example.com ", "correct horse")
	if err != nil || got.ID != u.ID || got.TenantID != ten.ID {
		t.Errorf("Authenticate = %+v, %v; want the user", got, err)
	}
	for _, c := range [][2]string{{"alice@example.com", "wrong horse"}, {"nobody@example.com", "correct horse"}, {"", ""}} {
		if _, err := svc.Authenticate(ctx, c[0], c[1]); !errors.Is(err, tenants.ErrInvalidCredentials) {
			t.Errorf("Authenticate(%q, %q) = %v, want ErrInvalidCredentials", c[0], c[1], err)
		}
	}
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	svc, clk, rows := newService(t)
	ctx := context.Background()
	ten, err := svc.CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := svc.CreateAPIKey(ctx, ten.ID, "ci", []tenants.Scope{tenants.ScopeRisksRead})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^rk_live_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
		t.Errorf("secret %q is not rk_live_ and 43 base64url characters", secret)
	}
	if !strings.HasPrefix(k.ID, "key_") || k.TenantID != ten.ID || k.Name != "ci" || k.Mode != tenants.ModeLive ||
		!cmp.Equal(k.Scopes, []tenants.Scope{tenants.ScopeRisksRead}) {
		t.Errorf("key = %+v", k)
	}
	_, secret2, err := svc.CreateAPIKey(ctx, ten.ID, "", tenants.AllScopes)
	if err != nil || secret2 == secret {
		t.Fatalf("second key: %q, %v (must differ from the first)", secret2, err)
	}
	// Only a digest is stored.
	stored := rows("SELECT secret_hash FROM api_keys WHERE id = ?", k.ID)
	if len(stored) != 1 || strings.Contains(stored[0], secret[8:]) {
		t.Errorf("stored %q holds the secret", stored)
	}

	got, err := svc.VerifyAPIKey(ctx, secret)
	if err != nil || got.ID != k.ID || got.TenantID != ten.ID || !got.Has(tenants.ScopeRisksRead) || got.Has(tenants.ScopeRisksWrite) {
		t.Fatalf("VerifyAPIKey = %+v, %v", got, err)
	}
	// The last use is recorded once the address passes (CheckAddress), off the
	// request's path, so wait for it (bounded).
	if err := svc.CheckAddress(ctx, got, "203.0.113.7"); err != nil {
		t.Fatalf("CheckAddress of a key without allowedCidrs: %v", err)
	}
	recorded := false
	for deadline := time.Now().Add(10 * time.Second); !recorded && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		recorded = len(rows("SELECT last_used_at FROM api_keys WHERE id = ? AND last_used_at IS NOT NULL", k.ID)) == 1
	}
	if !recorded {
		t.Errorf("last use not recorded")
	}
	for _, bad := range []string{"", "rk_", secret + "x", strings.ToUpper(secret), "sk_" + secret[3:], secret[:20], "rk_test_" + secret[8:]} {
		if _, err := svc.VerifyAPIKey(ctx, bad); !errors.Is(err, tenants.ErrInvalidCredentials) {
			t.Errorf("VerifyAPIKey(%q) = %v, want ErrInvalidCredentials", bad, err)
		}
	}

	clk.Advance(time.Minute)
	if err := svc.RevokeAPIKey(ctx, ten.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.VerifyAPIKey(ctx, secret); !errors.Is(err, tenants.ErrInvalidCredentials) {
		t.Errorf("revoked key verifies: %v", err)
	}
	if _, err := svc.VerifyAPIKey(ctx, secret2); err != nil {
		t.Errorf("revoking one key broke another: %v", err)
	}
	first := rows("SELECT revoked_at FROM api_keys WHERE id = ?", k.ID)
	clk.Advance(time.Minute)
	if err := svc.RevokeAPIKey(ctx, ten.ID, k.ID); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	if again := rows("SELECT revoked_at FROM api_keys WHERE id = ?", k.ID); !cmp.Equal(first, again) {
		t.Errorf("revoking twice moved revoked_at %v → %v", first, again)
	}
	if err := svc.RevokeAPIKeyByID(ctx, "key_0193b2c4d5e67f8091a2b3c4d5e6f708"); !errors.Is(err, tenants.ErrAPIKeyNotFound) {
		t.Errorf("revoking an unknown key = %v, want ErrNotFound", err)
	}

	if _, _, err := svc.CreateAPIKey(ctx, ten.ID, "none", nil); inputField(err) != "scopes" {
		t.Errorf("key without scopes: %v", err)
	}
	if _, _, err := svc.CreateAPIKey(ctx, "ten_0193b2c4d5e67f8091a2b3c4d5e6f708", "x", tenants.AllScopes); !errors.Is(err, tenants.ErrTenantNotFound) {
		t.Errorf("key for an unknown tenant: %v", err)
	}
}

func TestParseScopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []tenants.Scope
	}{
		{"risks:read", []tenants.Scope{tenants.ScopeRisksRead}},
		{"risks:read,risks:write", []tenants.Scope{tenants.ScopeRisksRead, tenants.ScopeRisksWrite}},
		{"risks:read,risks:write,requests:read,events:read,audit:read", tenants.AllScopes},
		{" risks:write , risks:read ,", []tenants.Scope{tenants.ScopeRisksWrite, tenants.ScopeRisksRead}},
		{"risks:read,risks:read", []tenants.Scope{tenants.ScopeRisksRead}},
		{"", nil},
		{",", nil},
		{"risks:admin", nil},
		{"risks:read,risks:delete", nil},
	}
	for _, tt := range tests {
		got, err := tenants.ParseScopes(tt.in)
		if tt.want == nil {
			if inputField(err) != "scopes" {
				t.Errorf("ParseScopes(%q) = %v, %v; want an input error on scopes", tt.in, got, err)
			}
			continue
		}
		if err != nil || !cmp.Equal(tt.want, got) {
			t.Errorf("ParseScopes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

var cmpIgnoreTime = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".CreatedAt" }, cmp.Ignore())

// TestScopesDocumented: every scope says what it allows, and docs/roles-and-credentials.md
// lists each in the same words, so neither can drift from the one list.
func TestScopesDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/roles-and-credentials.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tenants.AllScopes {
		// The doc links the guide the code names as (docs/….md).
		allows, _, _ := strings.Cut(s.Allows(), " (docs/")
		row := "| `" + string(s) + "` | " + allows
		if allows == "" || !strings.Contains(string(doc), row) {
			t.Errorf("docs/roles-and-credentials.md lacks the row %q", row)
		}
	}
}

// TestAPIKeyModes: a test key says so in its secret and its mode, a key made before
// modes existed ("rk_" and no mode stored) is live, and a tenant's sandbox is no
// tenant of its own (docs/sandboxes.md).
func TestAPIKeyModes(t *testing.T) {
	t.Parallel()
	svc, _, rows := newService(t)
	ctx := context.Background()
	ten, err := svc.CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := svc.CreateModeAPIKey(ctx, ten.ID, "ci", tenants.AllScopes, tenants.ModeTest)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^rk_test_[A-Za-z0-9_-]{43}$`).MatchString(secret) || k.Mode != tenants.ModeTest {
		t.Errorf("test key %q, mode %q", secret, k.Mode)
	}
	got, err := svc.VerifyAPIKey(ctx, secret)
	if err != nil || got.Mode != tenants.ModeTest || tenants.ModeTest.Scope(got.TenantID) != ids.SandboxOf(ten.ID) {
		t.Fatalf("VerifyAPIKey(test key) = %+v, %v", got, err)
	}
	if got := rows("SELECT sandbox_of FROM tenants WHERE id = ?", ids.SandboxOf(ten.ID)); len(got) != 1 || got[0] != ten.ID {
		t.Errorf("sandbox row of %s: %q", ten.ID, got)
	}
	all, err := svc.Tenants(ctx)
	if err != nil || len(all) != 1 || all[0].ID != ten.ID {
		t.Errorf("Tenants() = %+v, %v; want the tenant alone, not its sandbox", all, err)
	}
	if _, err := svc.GetTenant(ctx, ids.SandboxOf(ten.ID)); !errors.Is(err, tenants.ErrTenantNotFound) {
		t.Errorf("GetTenant(sandbox) = %v, want ErrTenantNotFound", err)
	}

	// A key made before modes: its secret is "rk_" and no mode word, its row's mode
	// the one migration 0019 gave every key.
	old, oldSecret, err := svc.CreateAPIKey(ctx, ten.ID, "old", tenants.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	legacy := "rk_" + oldSecret[len(tenants.LivePrefix):]
	rows("UPDATE api_keys SET secret_hash = ?, mode = 'live' WHERE id = ?", sha256Hex(legacy), old.ID)
	got, err = svc.VerifyAPIKey(ctx, legacy)
	if err != nil || got.ID != old.ID || got.Mode != tenants.ModeLive {
		t.Errorf("VerifyAPIKey(rk_ key made before modes) = %+v, %v; want it live", got, err)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
