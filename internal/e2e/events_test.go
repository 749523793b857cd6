package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
	"github.com/riskapi/riskapi/internal/events/webhooktest"
)

// eventsTenant is a provisioned tenant with an endpoint subscribed to every event.
type eventsTenant struct {
	creds  e2e.Credentials
	reader *e2e.Client // an API key with events:read
	secret string      // the endpoint's signing secret
}

// provisionEvents provisions a tenant through the CLI, signs its admin in and
// subscribes an endpoint at rcvURL through the API.
func provisionEvents(t *testing.T, dbURL, base, rcvURL string) eventsTenant {
	t.Helper()
	ctx := context.Background()
	bin, dir := e2e.Binary(t), t.TempDir()
	creds := e2e.ProvisionT(t, dbURL, t.Name())
	if _, err := e2e.CLI(ctx, bin, dbURL, dir, "user", "create", "--tenant", creds.TenantID,
		"--email", "admin@example.com", "--password", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	out, err := e2e.CLI(ctx, bin, dbURL, dir, "apikey", "create", "--tenant", creds.TenantID, "--scopes", "events:read")
	if err != nil {
		t.Fatal(err)
	}
	var k struct{ Key string }
	json.Unmarshal(out, &k)
	post := func(path, bearer string, body any, into any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %d", path, res.StatusCode)
		}
		json.NewDecoder(res.Body).Decode(into)
	}
	var s struct{ Token string }
	post("/v1/sessions", "", map[string]string{"email": "admin@example.com", "password": "correct horse battery"}, &s)
	var ep struct{ Secret string }
	post("/v1/webhook-endpoints", s.Token, map[string]any{"url": rcvURL + "/riskapi"}, &ep)
	return eventsTenant{creds: creds, reader: e2e.NewClient(k.Key, 4), secret: ep.Secret}
}

// listEvents reads every event of the tenant through base.
func (et eventsTenant) listEvents(t *testing.T, base string) map[string]string {
	t.Helper()
	out := map[string]string{} // event id → the object's id
	cursor := ""
	for {
		path := "/v2/events?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		a := et.reader.Do(context.Background(), http.MethodGet, base, path, "", nil)
		if a.Err != nil || a.Status != http.StatusOK {
			t.Fatalf("GET %s: %s", path, a)
		}
		var p struct {
			Data []struct {
				ID   string `json:"id"`
				Type string `json:"type"`
				Data struct {
					Object struct {
						ID string `json:"id"`
					} `json:"object"`
				} `json:"data"`
			} `json:"data"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(a.Body, &p); err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Data {
			if e.Type != "risk.created" {
				t.Errorf("unexpected %s event %s", e.Type, e.ID)
			}
			out[e.ID] = e.Data.Object.ID
		}
		if p.NextCursor == nil {
			return out
		}
		cursor = *p.NextCursor
	}
}

// holdingReceiver answers nothing until released: deliveries stay in flight.
func holdingReceiver(t *testing.T) (*webhooktest.Receiver, func()) {
	rcv := webhooktest.NewReceiver(t)
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	rcv.Answer(func(int, webhooktest.Delivery) int {
		select {
		case <-hold:
		case <-time.After(time.Minute):
		}
		return http.StatusNoContent
	})
	return rcv, release
}

// TestEventsDeliveredAfterSIGKILL: a server SIGKILLed after committing writes and
// before delivering their events (the deliveries are in flight, unanswered) delivers
// every one of them after its restart — same webhook-ids, valid signatures.
func TestEventsDeliveredAfterSIGKILL(t *testing.T) {
	dbURL := dbtest.URL(t)
	rcv, release := holdingReceiver(t)
	in := e2e.StartT(t, e2e.Config{DatabaseURL: dbURL, Env: []string{"WEBHOOK_ALLOW_PRIVATE=true"}})
	et := provisionEvents(t, dbURL, in.URL(), rcv.URL())
	client := e2e.NewClient(et.creds.APIKey, 4)
	const n = 6
	for i := range n {
		a := client.CreateRisk(context.Background(), in.URL(), fmt.Sprintf("sigkill-%d", i), []byte(fmt.Sprintf(`{"title":"r%d"}`, i)))
		if a.Err != nil || a.Status != http.StatusCreated {
			t.Fatalf("create %d: %s", i, a)
		}
	}
	events := et.listEvents(t, in.URL())
	if len(events) != n {
		t.Fatalf("%d events for %d committed creates", len(events), n)
	}
	rcv.WaitIDs(t, 1, 20*time.Second) // claimed and in flight: nothing answered yet
	if err := in.Kill(); err != nil {
		t.Fatal(err)
	}
	release()
	before := len(rcv.Deliveries())
	rcv.Answer(nil)
	if err := in.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Any instance resumes a dead one's claims once their lease (15 s) ends; on
	// SQLite, the one process there is resumes them at startup.
	ids := rcv.WaitIDs(t, n, 60*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for !allDeliveredAfter(rcv, events, before) {
		if time.Now().After(deadline) {
			t.Fatalf("not every event was delivered after the restart: %v", rcv.IDs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for id := range ids {
		if _, ok := events[id]; !ok {
			t.Errorf("delivered webhook-id %s is no event of the tenant", id)
		}
	}
	t.Logf("%d events, %d deliveries before the kill (unanswered), %d in all", n, before, len(rcv.Deliveries()))
	webhooktest.VerifyWithNode(t, et.secret, rcv.Deliveries())
}

// allDeliveredAfter reports whether every event reached rcv after its first `from`
// deliveries (those were in flight when the server died).
func allDeliveredAfter(rcv *webhooktest.Receiver, events map[string]string, from int) bool {
	got := map[string]bool{}
	for _, d := range rcv.Deliveries()[from:] {
		got[d.ID()] = true
	}
	for id := range events {
		if !got[id] {
			return false
		}
	}
	return true
}

// TestEventsUnderKillsScaleOut: three instances on one PostgreSQL, keyed writes
// under SIGKILLs (the crash harness). Afterwards every committed risk has exactly one
// risk.created event, and every event reaches the endpoint: none lost, duplicates
// only as repeats of the same webhook-id. The run logs how many repeats there were.
//
// Full size: go test -timeout 30m -run TestEventsUnderKillsScaleOut -v ./internal/e2e/ -e2e.scale=10
func TestEventsUnderKillsScaleOut(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("several instances need PostgreSQL (TEST_DATABASE_URL=postgres://…); SQLite supports one process")
	}
	lease := 5 * time.Second
	dbURL := dbtest.URL(t)
	rcv := webhooktest.NewReceiver(t)
	env := []string{"WEBHOOK_ALLOW_PRIVATE=true"}
	var insts []*e2e.Instance
	for i := range 3 {
		insts = append(insts, e2e.StartT(t, e2e.Config{DatabaseURL: dbURL, Name: fmt.Sprintf("api%d", i+1), Lease: lease, Env: env}))
	}
	et := provisionEvents(t, dbURL, insts[0].URL(), rcv.URL())
	rep := writeScenario{keys: scaled(200), clients: 8, dup: 2, lease: lease,
		chaos: &chaos{kills: scaled(8), minUp: 50 * time.Millisecond, maxUp: 300 * time.Millisecond, newPortEvery: 5, burst: 8},
	}.run(t, dbURL, et.creds, insts)
	if rep.NetErrors == 0 {
		t.Errorf("no request was cut by a kill: the test did not test anything (%s)", rep)
	}

	risks, err := e2e.NewClient(et.creds.APIKey, 4).ListRisks(context.Background(), insts[0].URL(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	events := et.listEvents(t, insts[0].URL())
	perRisk := map[string]int{}
	for _, riskID := range events {
		perRisk[riskID]++
	}
	for _, r := range risks {
		if perRisk[r.ID] != 1 {
			t.Errorf("risk %s has %d risk.created events, want 1", r.ID, perRisk[r.ID])
		}
	}
	if len(events) != len(risks) {
		t.Fatalf("%d events for %d committed risks", len(events), len(risks))
	}
	// Claims of killed instances are resumed once their lease (15 s) ends.
	ids := rcv.WaitIDs(t, len(events), 90*time.Second)
	var repeats int
	for id, c := range ids {
		if _, ok := events[id]; !ok {
			t.Errorf("delivered webhook-id %s is no committed event", id)
		}
		repeats += c - 1
	}
	t.Logf("events: %d committed changes, %d events, %d deliveries, %d delivered more than once (repeats of the same webhook-id: %d)",
		len(risks), len(events), len(rcv.Deliveries()), countOver(ids, 1), repeats)
	webhooktest.VerifyWithNode(t, et.secret, rcv.Deliveries())
	for _, in := range insts {
		if races, panics, _ := in.Problems(); len(races)+len(panics) > 0 {
			t.Errorf("%s: races %s panics %s", in.Name(), e2e.First(races, 3), e2e.First(panics, 3))
		}
		if strings.Contains(in.Logs(), "could not record the attempt") {
			t.Logf("%s logged attempts it could not record (their claims fell due again)", in.Name())
		}
	}
}

func countOver(m map[string]int, n int) int {
	c := 0
	for _, v := range m {
		if v > n {
			c++
		}
	}
	return c
}
