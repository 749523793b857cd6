package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/eventstore"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/secretkey"
	"github.com/riskapi/riskapi/internal/webhooks"
	"github.com/riskapi/riskapi/internal/webhooks/webhookstore"
)

// TestNoUnkeyedHashOfPasswordBodies: keyed requests that carry a password (a new
// user's, a password change, one that failed with a wrong current password) leave no
// column holding the password or an unkeyed hash of the body: a plain SHA-256, alone
// or framed as the fingerprints once were, would let a copy of the database test
// guesses of the password (issue 25, item 4). The fingerprint is keyed with
// SECRET_KEY, which is not in the database.
func TestNoUnkeyedHashOfPasswordBodies(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	admin := apitest.Login(t, env, a)
	member := env.User(a.ID, "member")
	sends := []struct {
		path, bearer string
		body         map[string]string
		status       int
	}{
		{"/v1/users", admin.Token, map[string]string{"email": "carol@example.com", "password": "guessable-password-1", "role": "member"}, 201},
		{"/v1/me/password", member.Token, map[string]string{"currentPassword": "wrong-password-22", "newPassword": "guessable-password-2"}, 0},
		{"/v1/me/password", member.Token, map[string]string{"currentPassword": member.Password, "newPassword": "guessable-password-3"}, 204},
	}
	var needles []string
	for i, s := range sends {
		raw, _ := json.Marshal(s.body)
		res := env.Do(apitest.Request{Method: "POST", Path: s.path, Bearer: s.bearer, Body: string(raw),
			Header: http.Header{"Idempotency-Key": {fmt.Sprintf("password-body-%d", i)}}})
		if s.status != 0 && res.Code != s.status || s.status == 0 && res.Code < 400 {
			t.Fatalf("POST %s: %d %s", s.path, res.Code, res.Body.String())
		}
		canon, err := jsonbody.Canonical(nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		framed := "riskapi-idempotency-fingerprint/1\nPOST\n" + s.path + "\n\njson\n" + string(canon)
		needles = append(needles, sha(string(canon)), sha(string(raw)), sha(framed))
		for _, v := range s.body {
			if strings.Contains(v, "password-") {
				needles = append(needles, v)
			}
		}
	}
	for _, cell := range dumpText(t, env) {
		for _, n := range needles {
			if strings.Contains(cell.value, n) {
				t.Errorf("%s.%s holds %q, a password or an unkeyed hash of a body carrying one", cell.table, cell.column, n)
			}
		}
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// textCell is one value of a database dump, as text.
type textCell struct{ table, column, value string }

// dumpText reads every column of every row of every table of env's database, as
// text: what a copy of the database gives away.
func dumpText(t *testing.T, env *apitest.Env) []textCell {
	t.Helper()
	db := env.App.DB.DB
	tables, err := db.Migrator().GetTables()
	if err != nil {
		t.Fatal(err)
	}
	var cells []textCell
	for _, table := range tables {
		rows, err := db.Table(table).Rows()
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				cells = append(cells, textCell{table: table, column: cols[i], value: fmt.Sprint(v)})
			}
		}
		rows.Close()
	}
	if len(cells) == 0 {
		t.Fatal("the dump is empty")
	}
	return cells
}

// TestDumpHoldsNoKeys: a copy of the database holds no inbound source secret or
// outbound endpoint secret in clear, and neither the key that unseals them nor the
// one that signs sessions: both derive from SECRET_KEY, kept out of the database
// (issue 25, item 9). riskapi used to generate both and keep them in its settings
// table, and kept endpoint secrets plain.
func TestDumpHoldsNoKeys(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Outbound.AllowPrivate = true })
	a := env.Tenant("Acme")
	s := apitest.Login(t, env, a)
	src, err := env.App.Webhooks.CreateSource(t.Context(), a.ID, "scanner")
	if err != nil {
		t.Fatal(err)
	}
	var ep struct{ Secret string }
	env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: s.Token,
		JSON: map[string]any{"url": "http://127.0.0.1:9/hook"}}).Expect(201).Decode(&ep)
	key := env.App.SecretKey
	needles := []string{strings.TrimPrefix(src.Secret, "whsec_"), strings.TrimPrefix(ep.Secret, "whsec_"),
		hex.EncodeToString(key.For(secretkey.SealWebhookSecrets)), hex.EncodeToString(key.For(secretkey.SignSessions))}
	for _, cell := range dumpText(t, env) {
		if cell.table == "settings" {
			t.Errorf("settings row %s = %q: riskapi keeps no key in the database", cell.column, cell.value)
		}
		for _, n := range needles {
			if strings.Contains(cell.value, n) {
				t.Errorf("%s.%s holds a secret or a key in clear", cell.table, cell.column)
			}
		}
	}
}

// TestLegacyKeysAreResealedAndForgotten: a database from before SECRET_KEY keeps its
// generated sealing key and JWT secret in the settings table, and its source secrets
// sealed under that key. The next start re-seals them under SECRET_KEY (the source
// still verifies with its secret) and deletes both keys.
func TestLegacyKeysAreResealedAndForgotten(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	ctx := t.Context()
	oldKey := make([]byte, 32)
	for i := range oldKey {
		oldKey[i] = byte(i + 1)
	}
	legacy, err := webhookstore.New(env.App.DB, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	src := &webhooks.Source{ID: ids.New(ids.Webhook), TenantID: a.ID, Name: "legacy-scanner",
		Secret: "whsec_" + strings.Repeat("A", 43), CreatedAt: time.Now()}
	// The legacy rows are fixtures, not changes anybody made: no recorder is needed.
	legacy.Recording(changes.Recorders{})
	if err := legacy.CreateSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	legacyEvents, err := eventstore.New(env.App.DB, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	ep := &events.Endpoint{ID: "we_legacy", TenantID: a.ID, URL: "http://127.0.0.1:9/", Types: []events.Type{"*"},
		Secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("B", 32))), CreatedAt: time.Now()}
	legacyEvents.Recording(changes.Recorders{})
	if err := legacyEvents.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"webhook_secret_key": hex.EncodeToString(oldKey), "jwt_secret": strings.Repeat("ab", 32)} {
		if err := env.App.DB.Exec("INSERT INTO settings (name, value) VALUES (?, ?)", name, v).Error; err != nil {
			t.Fatal(err)
		}
	}
	twin := env.Twin() // the next start
	got, err := twin.App.Webhooks.Source(ctx, "legacy-scanner")
	if err != nil {
		t.Fatalf("legacy source after the restart: %v", err)
	}
	if got.Secret != src.Secret {
		t.Errorf("legacy source's secret after re-sealing = %q, want %q", got.Secret, src.Secret)
	}
	eps, err := twin.App.Events.Endpoints.Store.Endpoints(ctx, a.ID)
	if err != nil || len(eps) != 1 || eps[0].Secret != ep.Secret {
		t.Errorf("endpoints after re-sealing %+v (%v), want the legacy one with its secret", eps, err)
	}
	var n int64
	if err := env.App.DB.Table("settings").Count(&n).Error; err != nil || n != 0 {
		t.Errorf("%d settings rows (%v) after the restart, want the legacy keys deleted", n, err)
	}
}

// TestPlainEndpointSecretsAreSealed: endpoint secrets stored plain before they were
// sealed are sealed at the next start, and still sign deliveries.
func TestPlainEndpointSecretsAreSealed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	secret := "whsec_" + strings.Repeat("A", 43) + "="
	if err := env.App.DB.Exec(`INSERT INTO webhook_endpoints (id, tenant_id, url, secret, event_types, created_at)
		VALUES ('we_legacy', ?, 'http://127.0.0.1:9/', ?, '*', ?)`, a.ID, secret, time.Now().UTC()).Error; err != nil {
		t.Fatal(err)
	}
	twin := env.Twin() // the next start
	var stored string
	if err := env.App.DB.Raw("SELECT secret FROM webhook_endpoints WHERE id = 'we_legacy'").Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, strings.Repeat("A", 43)) || !strings.HasPrefix(stored, "v1.") {
		t.Errorf("plain endpoint secret after the restart: %q, want it sealed", stored)
	}
	eps, err := twin.App.Events.Endpoints.Store.Endpoints(t.Context(), a.ID)
	if err != nil || len(eps) != 1 || eps[0].Secret != secret {
		t.Errorf("endpoints %+v (%v), want the legacy one with its secret", eps, err)
	}
}
