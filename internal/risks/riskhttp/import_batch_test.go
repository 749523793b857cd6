package riskhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/database"
)

// TestLargeImportRecordsEachRisk: an import of 2,500 new risks — written a thousand
// at a time — with one update in the middle creates every risk once, each with
// exactly one risk.created event and one audit entry, and queues one delivery of
// each event to the endpoint subscribed to risk.created and none to one that is not.
func TestLargeImportRecordsEachRisk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	tok := apitest.Login(t, env, a).Token
	for _, types := range [][]string{{"risk.created"}, {"risk.deleted"}} {
		env.Do(apitest.Request{Method: "POST", Path: "/v1/webhook-endpoints", Bearer: tok,
			JSON: map[string]any{"url": "https://93.184.216.34/" + types[0], "events": types}}).Expect(201)
	}
	old := importOne(t, env, a, "OLD")
	const n = 2500
	var file strings.Builder
	file.WriteString("externalId,title,likelihood,impact\n")
	for i := range n {
		if i == 1500 {
			file.WriteString("OLD,old renamed,2,2\n")
		}
		fmt.Fprintf(&file, "B-%d,batch %d,%d,%d\n", i, i, 1+i%5, 1+i%3)
	}
	var rep report
	importFile(env, a.Key, "", file.String(), nil).Expect(http.StatusCreated).Decode(&rep)
	if rep.Created != n || rep.Updated != 1 {
		t.Fatalf("report %+v, want %d created and 1 updated", rep, n)
	}

	db := env.App.DB.DB
	var stored []struct{ ID, ExternalID, Title string }
	if err := db.Table("risks").Where("tenant_id = ?", a.ID).Select("id, external_id, title").Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range stored {
		if r.ID == old {
			if r.Title != "old renamed" {
				t.Errorf("the updated risk's title is %q", r.Title)
			}
			continue
		}
		ids[r.ID] = true
		if want := "batch " + strings.TrimPrefix(r.ExternalID, "B-"); r.Title != want {
			t.Errorf("risk %s has title %q, want %q", r.ExternalID, r.Title, want)
		}
	}
	if len(ids) != n {
		t.Fatalf("%d new risks stored, want %d", len(ids), n)
	}

	var payloads []string
	if err := db.Table("events").Where("tenant_id = ? AND type = ?", a.ID, "risk.created").
		Pluck("payload", &payloads).Error; err != nil {
		t.Fatal(err)
	}
	evented := map[string]int{}
	for _, p := range payloads {
		var ev struct {
			Data struct{ Object struct{ ID string } }
		}
		if err := json.Unmarshal([]byte(p), &ev); err != nil {
			t.Fatal(err)
		}
		evented[ev.Data.Object.ID]++
	}
	var audited []string
	if err := db.Table("audit_log").Where("tenant_id = ? AND action = ?", a.ID, "risk.created").
		Pluck("target_id", &audited).Error; err != nil {
		t.Fatal(err)
	}
	entries := map[string]int{}
	for _, id := range audited {
		entries[id]++
	}
	for id := range ids {
		if evented[id] != 1 || entries[id] != 1 {
			t.Fatalf("risk %s has %d risk.created events and %d audit entries, want 1 and 1", id, evented[id], entries[id])
		}
	}
	var updated int64
	db.Table("events").Where("tenant_id = ? AND type = ?", a.ID, "risk.updated").Count(&updated)
	if updated != 1 {
		t.Errorf("%d risk.updated events, want 1", updated)
	}

	var deliveries []struct {
		URL string
		N   int
	}
	if err := db.Raw(`SELECT e.url, COUNT(*) AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		JOIN events ev ON ev.id = d.event_id WHERE d.tenant_id = ? AND ev.type = 'risk.created' GROUP BY e.url`, a.ID).
		Scan(&deliveries).Error; err != nil {
		t.Fatal(err)
	}
	if len(deliveries) != 1 || !strings.HasSuffix(deliveries[0].URL, "/risk.created") || deliveries[0].N != n+1 {
		t.Errorf("deliveries of risk.created by endpoint %+v, want %d to the subscribed one only", deliveries, n+1)
	}
}

// TestImportHasItsOwnStoreBound: an import whose transaction must wait longer than
// the store bound of other requests (half IDEMPOTENCY_LEASE, here 1 s) completes
// under IMPORT_TIMEOUT; with IMPORT_TIMEOUT at that same 1 s the same wait is 503
// STORE_UNAVAILABLE and nothing is written. The wait: another unit of work holds the
// risk the import updates (PostgreSQL: its row lock; SQLite: the write lock) for
// 1.5 s.
func TestImportHasItsOwnStoreBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		importTimeout time.Duration
		want          int
	}{{5 * time.Minute, http.StatusCreated}, {time.Second, http.StatusServiceUnavailable}} {
		t.Run(tt.importTimeout.String(), func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t, func(c *config.Config) {
				c.Idempotency.Lease = 2 * time.Second
				c.Uploads.ImportTimeout = tt.importTimeout
			})
			a := env.Tenant("Acme")
			held := importOne(t, env, a, "HELD")
			file := "externalId,title\nHELD,renamed\nNEW-1,new\n"

			db := env.App.DB.DB
			locked, release := make(chan error, 1), make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- database.RunInTx(context.Background(), db, func(ctx context.Context) error {
					var id string
					err := database.Conn(ctx, db).Table("risks").Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate}).
						Where("id = ?", held).Select("id").Scan(&id).Error
					if err == nil {
						// Any write takes SQLite's write lock; PostgreSQL's row lock is taken.
						err = database.Conn(ctx, db).Exec("UPDATE risks SET owner = owner WHERE id = ?", held).Error
					}
					locked <- err
					<-release
					return nil
				})
			}()
			if err := <-locked; err != nil {
				t.Fatal(err)
			}
			go func() { time.Sleep(1500 * time.Millisecond); close(release) }()
			res := importFile(env, a.Key, "", file, nil).Expect(tt.want)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if tt.want != http.StatusCreated {
				if res.ProblemCode() != "STORE_UNAVAILABLE" {
					t.Errorf("code %s, want STORE_UNAVAILABLE", res.ProblemCode())
				}
				if n := count(t, env, a.Key); n != 1 {
					t.Errorf("%d risks after the cut import, want the 1 there before", n)
				}
				return
			}
			if n := count(t, env, a.Key); n != 2 {
				t.Errorf("%d risks after the import, want 2", n)
			}
		})
	}
}

// importOne imports one risk with externalID and returns its ID.
func importOne(t *testing.T, env *apitest.Env, a *apitest.Tenant, externalID string) string {
	t.Helper()
	importFile(env, a.Key, "", "externalId,title\n"+externalID+",old\n", nil).Expect(http.StatusCreated)
	var id string
	if err := env.App.DB.DB.Table("risks").Where("tenant_id = ? AND external_id = ?", a.ID, externalID).
		Pluck("id", &id).Error; err != nil || id == "" {
		t.Fatalf("imported risk %s: %q, %v", externalID, id, err)
	}
	return id
}
