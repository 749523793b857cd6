package requestloghttp_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/database"
)

// entry is a request-log entry as the API shows it.
type entry struct {
	ID         string  `json:"id"`
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	Route      string  `json:"route"`
	Status     int     `json:"status"`
	DurationMs float64 `json:"durationMs"`
	Credential struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"credential"`
	IdempotencyKey     *string   `json:"idempotencyKey"`
	IdempotencyOutcome *string   `json:"idempotencyOutcome"`
	ErrorCode          *string   `json:"errorCode"`
	CreatedAt          time.Time `json:"createdAt"`
}

type page struct {
	Data       []entry `json:"data"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

// keyState is the key inspector's answer.
type keyState struct {
	Key        string     `json:"key"`
	Method     string     `json:"method"`
	Path       string     `json:"path"`
	State      string     `json:"state"`
	StatusCode *int       `json:"statusCode"`
	CreatedAt  *time.Time `json:"createdAt"`
	ExpiresAt  *time.Time `json:"expiresAt"`
	RequestID  *string    `json:"requestId"`
}

// flush waits until every entry logged so far is stored.
func flush(t *testing.T, env *apitest.Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.App.RequestLog.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// list returns the whole log of bearer's tenant matching query, following cursors.
func list(t *testing.T, env *apitest.Env, bearer, query string) []entry {
	t.Helper()
	flush(t, env)
	var all []entry
	q, _ := url.ParseQuery(query)
	for range 100 {
		var p page
		apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/requests?" + q.Encode(), Bearer: bearer}).
			Expect(http.StatusOK).Decode(&p)
		all = append(all, p.Data...)
		if !p.HasMore {
			return all
		}
		q.Set("cursor", *p.NextCursor)
	}
	t.Fatal("paging does not end")
	return nil
}

func inspect(t *testing.T, env *apitest.Env, bearer, key, method, path string) *apitest.Response {
	t.Helper()
	q := url.Values{"method": {method}, "path": {path}}
	return apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: "/v2/idempotency-keys/" + key + "?" + q.Encode(), Bearer: bearer})
}

// login signs tenant's user in and returns the session token.
func login(t *testing.T, env *apitest.Env, tenant *apitest.Tenant) string {
	t.Helper()
	return apitest.Login(t, env, tenant).Token
}

// holdRiskWrites blocks every write to the risks table from another connection until
// the returned release is called: on PostgreSQL a table lock, on SQLite the database's
// one write lock. A keyed create sent meanwhile holds its key and waits — a real
// request in flight, not a stand-in.
func holdRiskWrites(t *testing.T, env *apitest.Env) (release func()) {
	t.Helper()
	ctx := context.Background()
	sqlDB, err := env.App.DB.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"BEGIN IMMEDIATE"}
	if env.App.DB.Dialect == database.Postgres {
		stmts = []string{"BEGIN", "LOCK TABLE risks IN EXCLUSIVE MODE"}
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var once bool
	release = func() {
		if !once {
			once = true
			conn.ExecContext(ctx, "ROLLBACK")
			conn.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// rowsAsText returns every row of table, every column, as text.
func rowsAsText(t *testing.T, env *apitest.Env, table string) []string {
	t.Helper()
	rows, err := env.App.DB.Raw("SELECT * FROM " + table).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(func() []string {
			s := make([]string, len(vals))
			for i, v := range vals {
				s[i] = string(v)
			}
			return s
		}())
		out = append(out, string(b))
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// waitProcessing polls the key inspector until it reports key as processing: the
// request holding it has taken its key.
func waitProcessing(t *testing.T, env *apitest.Env, bearer, key, path string) keyState {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		res := env.Do(apitest.Request{Method: http.MethodGet, Bearer: bearer,
			Path: "/v2/idempotency-keys/" + key + "?method=POST&path=" + url.QueryEscape(path)})
		if res.Code == http.StatusOK {
			var k keyState
			res.Decode(&k)
			if k.State == "processing" {
				return k
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed as processing: %d %s", key, res.Code, res.Body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
