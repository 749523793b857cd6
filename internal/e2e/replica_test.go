package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// replicaView is what one instance shows of a risk through the reads section 16
// sends to the replica.
type replicaView struct {
	listed, searched, exported, audited, auditExported bool
	heat                                               int // the heat map's count in the risk's cell
}

// viewOf reads, through base with key, where the risk id titled title (with its one
// word word, likelihood l and impact i) shows in the lists, the search, the heat
// map, the risk export, the audit log and its export.
func viewOf(t *testing.T, ctx context.Context, c *e2e.Client, base, id, word string, l, i int) replicaView {
	t.Helper()
	get := func(path string) []byte {
		a := c.Do(ctx, http.MethodGet, base, path, "", nil)
		if a.Err != nil || a.Status != http.StatusOK {
			t.Fatalf("GET %s: %s", path, a)
		}
		return a.Body
	}
	var v replicaView
	v.listed = bytes.Contains(get("/v2/risks?limit=100"), []byte(id))
	v.searched = bytes.Contains(get("/v2/risks?q="+word), []byte(id))
	v.exported = bytes.Contains(get("/v2/risks/export?format=ndjson"), []byte(id))
	v.audited = bytes.Contains(get("/v2/audit-log?action=risk.created&limit=100"), []byte(id))
	v.auditExported = bytes.Contains(get("/v2/audit-log/export?format=ndjson"), []byte(id))
	var hm struct {
		Cells []struct{ Likelihood, Impact, Count int } `json:"cells"`
	}
	if err := json.Unmarshal(get("/v2/risks/heatmap"), &hm); err != nil {
		t.Fatal(err)
	}
	for _, cell := range hm.Cells {
		if cell.Likelihood == l && cell.Impact == i {
			v.heat = cell.Count
		}
	}
	return v
}

// scopedKey creates, through the CLI, an API key of tenant with scopes.
func scopedKey(t *testing.T, url, tenant, scopes string) string {
	t.Helper()
	out, err := e2e.CLI(context.Background(), e2e.Binary(t), url, t.TempDir(), "apikey", "create", "--tenant", tenant,
		"--scopes", scopes, "--name", "replica reader")
	if err != nil {
		t.Fatal(err)
	}
	var k struct{ Key string }
	if err := json.Unmarshal(out, &k); err != nil || !strings.HasPrefix(k.Key, "rk_") {
		t.Fatalf("api apikey create printed %q", out)
	}
	return k.Key
}

// TestReplicaReads is issue 28's replica test (contract §16; docs/deploying.md,
// Replicas): an instance with DATABASE_READ_URL pointed at a streaming standby of
// its primary. With the standby's replay paused, a risk written since is missing
// from the reads section 16 sends to the replica — the list, the search, the heat
// map, the export, the audit log and its export — while the key inspector, the
// key's replay and the risk by id, which stay on the primary, show it exactly;
// once replay resumes, the replica's reads catch up.
func TestReplicaReads(t *testing.T) {
	pair := e2e.StartPGPairT(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	primary := pair.Primary.URL()
	if _, err := e2e.CLI(ctx, e2e.Binary(t), primary, t.TempDir(), "migrate"); err != nil {
		t.Fatal(err)
	}
	creds := e2e.ProvisionT(t, primary, t.Name())
	key := scopedKey(t, primary, creds.TenantID, "risks:read,risks:write,requests:read,audit:read")
	in := e2e.StartT(t, e2e.Config{DatabaseURL: primary, Name: "api", Env: []string{"DATABASE_READ_URL=" + pair.Standby.URL()}})
	c := e2e.NewClient(key, 2)
	defer c.Close()
	create := func(k, title string, l, i int) e2e.Answer {
		body, _ := json.Marshal(map[string]any{"title": title, "likelihood": l, "impact": i})
		a := c.CreateRisk(ctx, in.URL(), k, body)
		if a.Status != http.StatusCreated {
			t.Fatalf("create %q: %s", title, a)
		}
		return a
	}
	first := create("replica-key-first", "replicated first", 1, 1)
	firstID, _ := e2e.RiskID(first.Body)
	eventually(t, ctx, "the replica has the first risk", func() bool {
		return viewOf(t, ctx, c, in.URL(), firstID, "first", 1, 1) == replicaView{true, true, true, true, true, 1}
	})

	if err := pair.Standby.Exec(ctx, "SELECT pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the standby's replay is paused", func() bool {
		n, err := pair.Standby.QueryInt(ctx, "SELECT count(*) FROM pg_get_wal_replay_pause_state() s WHERE s = 'paused'")
		return err == nil && n == 1
	})
	created := create("replica-key-second", "written while paused", 4, 5)
	id, _ := e2e.RiskID(created.Body)
	if v := viewOf(t, ctx, c, in.URL(), id, "paused", 4, 5); v != (replicaView{}) {
		t.Errorf("with the replica's replay paused, the new risk shows in the replica's reads %+v, want none "+
			"(listed, searched, exported, audited, audit-exported, heat-map count)", v)
	}
	checkPrimaryReads(t, ctx, c, in.URL(), id, created)

	if err := pair.Standby.Exec(ctx, "SELECT pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the replica's reads catch up once replay resumes", func() bool {
		return viewOf(t, ctx, c, in.URL(), id, "paused", 4, 5) == replicaView{true, true, true, true, true, 1}
	})
}

// checkPrimaryReads checks the reads section 16 keeps on the primary against the
// risk id just created (answer created, key replica-key-second): the key inspector,
// the key's replay and the risk itself.
func checkPrimaryReads(t *testing.T, ctx context.Context, c *e2e.Client, base, id string, created e2e.Answer) {
	t.Helper()
	a := c.Do(ctx, http.MethodGet, base, "/v2/idempotency-keys/replica-key-second?method=POST&path=/v2/risks", "", nil)
	var rec struct {
		State      string `json:"state"`
		StatusCode int    `json:"statusCode"`
	}
	if a.Status != http.StatusOK || json.Unmarshal(a.Body, &rec) != nil || rec.State != "complete" || rec.StatusCode != 201 {
		t.Errorf("the key inspector answered %s, want the primary's complete record of the key", a)
	}
	body, _ := json.Marshal(map[string]any{"title": "written while paused", "likelihood": 4, "impact": 5})
	replay := c.CreateRisk(ctx, base, "replica-key-second", body)
	if replay.Status != http.StatusCreated || replay.Replayed != "true" || !bytes.Equal(replay.Body, created.Body) {
		t.Errorf("the key's retry answered %s (replayed %q), want the primary's stored answer", replay, replay.Replayed)
	}
	if a := c.Do(ctx, http.MethodGet, base, "/v2/risks/"+id, "", nil); a.Status != http.StatusOK {
		t.Errorf("GET the risk just created: %s, want 200 from the primary", a)
	}
}

// eventually polls cond every 50ms until it holds, failing t after 30s.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for !cond() {
		if sleepCtx(ctx, 50*time.Millisecond) != nil {
			t.Fatalf("%s: not within 30s", what)
		}
	}
}
