package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestListsReadTheReplica: with DATABASE_READ_URL, lists read the replica — here a
// second database standing for a replica whose replay stopped before this test's
// writes, and which holds one risk the primary does not — while the key's replay,
// the key inspector, the single risk just written and every read of a request that
// writes read the primary (contract §16; docs/deploying.md, Replicas).
func TestListsReadTheReplica(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("DATABASE_READ_URL names a PostgreSQL replica")
	}
	t.Parallel()
	replicaURL := dbtest.URL(t)
	env := apitest.New(t, func(c *config.Config) { c.Database.ReadURL = replicaURL })
	tenant := env.Tenant("Replica")
	replica, err := database.Open(context.Background(), replicaURL, database.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	now := time.Now().UTC()
	if err := replica.Exec("INSERT INTO tenants (id, name, created_at) VALUES (?, 'Replica', ?)", tenant.ID, now).Error; err != nil {
		t.Fatal(err)
	}
	if err := replica.Exec(`INSERT INTO risks (id, tenant_id, title, description, category, status, owner, created_at, updated_at)
		VALUES ('risk_018f0000000070008000000000000001', ?, 'only on the replica', '', '', 'open', '', ?, ?)`, tenant.ID, now, now).Error; err != nil {
		t.Fatal(err)
	}

	key := http.Header{"Idempotency-Key": {"replica-key-1"}}
	body := map[string]any{"title": "written to the primary", "likelihood": 2, "impact": 3}
	created := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key, JSON: body, Header: key}).Expect(201)
	id, _ := created.Map()["id"].(string)

	var list struct {
		Data []struct{ Title string } `json:"data"`
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: tenant.Key}).Expect(200).Decode(&list)
	if len(list.Data) != 1 || list.Data[0].Title != "only on the replica" {
		t.Errorf("the list read %+v, want the replica's one risk (it is behind the primary)", list.Data)
	}
	env.Do(apitest.Request{Method: "GET", Path: "/v2/risks/" + id, Bearer: tenant.Key}).Expect(200)
	replay := env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: tenant.Key, JSON: body, Header: key}).Expect(201)
	if replay.Header().Get("Idempotent-Replayed") != "true" || replay.Body.String() != created.Body.String() {
		t.Errorf("the retry of a completed key answered %s (replayed %q), want the primary's stored answer",
			replay.Body, replay.Header().Get("Idempotent-Replayed"))
	}
	inspected := env.Do(apitest.Request{Method: "GET", Path: "/v2/idempotency-keys/replica-key-1?method=POST&path=/v2/risks",
		Bearer: tenant.Key}).Expect(200).Map()
	if inspected["state"] != "complete" || inspected["statusCode"] != float64(201) {
		t.Errorf("the inspector shows %v, want the primary's record of the key", inspected)
	}

	// A request that writes, and a transaction, read the primary even for a list.
	onReplica := func(ctx context.Context) int64 {
		var n int64
		q := database.Conn(database.MayLag(ctx), env.App.DB.DB).Table("risks").Where("title = 'only on the replica'")
		if err := q.Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	ctx := context.Background()
	if n := onReplica(ctx); n != 1 {
		t.Errorf("a read that may lag counted %d replica-only risks, want 1", n)
	}
	if n := onReplica(database.WritesPrimary(ctx)); n != 0 {
		t.Errorf("a read of a request that writes counted %d replica-only risks, want 0 (the primary)", n)
	}
	err = database.RunInTx(ctx, env.App.DB.DB, func(ctx context.Context) error {
		if n := onReplica(ctx); n != 0 {
			t.Errorf("a read in a transaction counted %d replica-only risks, want 0 (the primary)", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
