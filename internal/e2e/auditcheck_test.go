package e2e_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/e2e"
)

// auditTrail is what the database holds for the tenant's risks after a run.
type auditTrail struct {
	entries map[string][]auditEntry // by target (risk ID)
	events  map[string]map[string]int
	risks   map[string]storedRisk
}

type storedRisk struct {
	Version int64
	Title   string
}

type auditEntry struct {
	Action, ActorType, ActorID, RequestID string
	Changes                               map[string]struct{ From, To json.RawMessage }
}

// readAuditTrail reads the tenant's risk entries, risk events and risks straight from
// the database.
func readAuditTrail(t *testing.T, ctx context.Context, url, tenant string) auditTrail {
	t.Helper()
	db, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tr := auditTrail{entries: map[string][]auditEntry{}, events: map[string]map[string]int{}}
	var entries []struct {
		TargetID, Action, ActorType, ActorID, RequestID string
		Changes                                         *string
	}
	var events []struct{ Type, Payload string }
	var risks []struct {
		ID      string
		Version int64
		Title   string
	}
	for q, dst := range map[string]any{
		`SELECT target_id, action, actor_type, actor_id, request_id, changes FROM audit_log WHERE tenant_id = ? AND target_type = 'risk'`: &entries,
		`SELECT type, payload FROM events WHERE tenant_id = ? AND type LIKE 'risk.%'`:                                                     &events,
		`SELECT id, version, title FROM risks WHERE tenant_id = ?`:                                                                        &risks,
	} {
		if err := db.WithContext(ctx).Raw(q, tenant).Scan(dst).Error; err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range entries {
		ae := auditEntry{Action: e.Action, ActorType: e.ActorType, ActorID: e.ActorID, RequestID: e.RequestID}
		if e.Changes != nil {
			if err := json.Unmarshal([]byte(*e.Changes), &ae.Changes); err != nil {
				t.Fatalf("entry of %s: changes %q: %v", e.TargetID, *e.Changes, err)
			}
		}
		tr.entries[e.TargetID] = append(tr.entries[e.TargetID], ae)
	}
	for _, ev := range events {
		id, err := e2e.RiskID(mustObject(t, ev.Payload))
		if err != nil {
			t.Fatalf("event %s: %v", ev.Payload, err)
		}
		if tr.events[id] == nil {
			tr.events[id] = map[string]int{}
		}
		tr.events[id][ev.Type]++
	}
	tr.risks = map[string]storedRisk{}
	for _, r := range risks {
		tr.risks[r.ID] = storedRisk{r.Version, r.Title}
	}
	return tr
}

// mustObject returns an event payload's data.object.
func mustObject(t *testing.T, payload string) []byte {
	t.Helper()
	var p struct {
		Data struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		t.Fatal(err)
	}
	return p.Data.Object
}

// checkAuditTrail checks the database against the chains' acknowledged writes: each
// chain's risk has exactly one risk.created entry (title v1), one risk.updated per
// update, whose changes take the title to v2 and to v3 once each (so no update is
// recorded twice or lost, whatever attempt committed it), and one risk.deleted (from
// v3) exactly when the chain deleted it; the risk exists, at version 3 with title v3,
// exactly when it was not deleted; its events match its entries one for one; every
// entry names the API key as actor and a request. No entry, event or risk exists for
// any other risk: a write cut by a kill before its commit left nothing behind.
func checkAuditTrail(t *testing.T, ctx context.Context, url string, creds e2e.Credentials, run *auditRun, chains []*auditChain) {
	t.Helper()
	tr := readAuditTrail(t, ctx, url, creds.TenantID)
	known := map[string]bool{}
	for _, ch := range chains {
		if !ch.done {
			t.Errorf("chain %d did not finish (risk %q)", ch.n, ch.id)
			continue
		}
		known[ch.id] = true
		want := map[string]int{"risk.created": 1, "risk.updated": auditUpdates}
		if ch.del {
			want["risk.deleted"] = 1
		}
		got := map[string]int{}
		titles := map[string]int{}
		for _, e := range tr.entries[ch.id] {
			got[e.Action]++
			if e.ActorType != "api_key" || e.ActorID != creds.KeyID || e.RequestID == "" {
				t.Errorf("risk %s: %s entry by %s %q, request %q; want the API key %s and a request", ch.id, e.Action,
					e.ActorType, e.ActorID, e.RequestID, creds.KeyID)
			}
			switch e.Action {
			case "risk.created", "risk.updated":
				titles[string(e.Changes["title"].To)]++
			case "risk.deleted":
				titles["from "+string(e.Changes["title"].From)]++
			}
		}
		checkCounts(t, ch.id, "audit entries", got, want)
		checkCounts(t, ch.id, "events", tr.events[ch.id], want)
		wantTitles := map[string]int{}
		for v := 1; v <= 1+auditUpdates; v++ {
			b, _ := json.Marshal(run.title(ch, v))
			wantTitles[string(b)] = 1
			if ch.del && v == 1+auditUpdates {
				wantTitles["from "+string(b)] = 1
			}
		}
		checkCounts(t, ch.id, "entries' titles", titles, wantTitles)
		r, stored := tr.risks[ch.id]
		if stored == ch.del || (stored && (r.Version != 1+auditUpdates || r.Title != run.title(ch, 1+auditUpdates))) {
			t.Errorf("risk %s (deleted by its chain: %v): stored %v, version %d, title %q", ch.id, ch.del, stored, r.Version, r.Title)
		}
	}
	for _, m := range []map[string]bool{keys(tr.entries), keys(tr.events), keys(tr.risks)} {
		for id := range m {
			if !known[id] {
				t.Errorf("risk %s: entries %v, events %v, stored %v — for a risk no client was ever answered about",
					id, tr.entries[id], tr.events[id], m[id])
			}
		}
	}
	t.Logf("audit trail: %d risks' entries, %d risks stored", len(tr.entries), len(tr.risks))
}

func checkCounts(t *testing.T, id, what string, got, want map[string]int) {
	t.Helper()
	for k, n := range want {
		if got[k] != n {
			t.Errorf("risk %s: %d %s for %s, want %d (all: %v)", id, got[k], what, k, n, got)
		}
	}
	for k, n := range got {
		if want[k] == 0 {
			t.Errorf("risk %s: %d unexpected %s for %s", id, n, what, k)
		}
	}
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
