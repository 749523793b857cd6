package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// fakeAPI is a tiny in-memory POST/GET /v2/risks that can be told to misbehave, so
// that the checks of WriteTest are shown to catch what they claim to.
type fakeAPI struct {
	ignoreKeys bool // execute every request, keyed or not: retries double writes
	loseEvery  int  // acknowledge but do not keep every n-th new risk
	blockFor   time.Duration
	// lostOutcome, when set, answers the first attempt of every other key, after
	// committing it, with a 503 of this outcome instead of cutting the connection.
	lostOutcome string
	mu          sync.Mutex
	risks       []e2e.Risk
	records     map[string][]byte
	seen        map[string]int
	firstSeen   map[string]time.Time
	n           int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method == http.MethodGet {
		all := f.risks
		start := 0
		if c := r.URL.Query().Get("cursor"); c != "" {
			b, _ := base64.RawURLEncoding.DecodeString(c)
			start, _ = strconv.Atoi(string(b))
		}
		end := min(start+100, len(all))
		resp := map[string]any{"data": all[start:end], "hasMore": end < len(all)}
		if end < len(all) {
			resp["nextCursor"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
		}
		json.NewEncoder(w).Encode(resp)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	body, _ := io.ReadAll(r.Body)
	if f.blockFor > 0 {
		if f.firstSeen[key].IsZero() {
			f.firstSeen[key] = time.Now()
		}
		if time.Since(f.firstSeen[key]) < f.blockFor {
			w.Header().Set("Content-Type", "application/problem+json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"code":"IDEMPOTENCY_REQUEST_IN_PROGRESS"}`)
			return
		}
	}
	if rec, ok := f.records[key]; ok && !f.ignoreKeys {
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(http.StatusCreated)
		w.Write(rec)
		return
	}
	var in struct {
		Title string `json:"title"`
	}
	json.Unmarshal(body, &in)
	f.n++
	risk := e2e.Risk{ID: fmt.Sprintf("risk_%06d", f.n), Title: in.Title}
	rec, _ := json.Marshal(risk)
	if f.loseEvery == 0 || f.n%f.loseEvery != 0 {
		f.risks = append(f.risks, risk)
	}
	f.records[key] = rec
	// Cut the first answer of every other key: the client must retry.
	f.seen[key]++
	if f.seen[key] == 1 && f.n%2 == 0 && f.lostOutcome != "" {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"code":"STORE_UNAVAILABLE","outcome":%q}`, f.lostOutcome)
		return
	}
	if f.seen[key] == 1 && f.n%2 == 0 {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	w.Header().Set("Idempotent-Replayed", "false")
	w.WriteHeader(http.StatusCreated)
	w.Write(rec)
}

func runFake(t *testing.T, f *fakeAPI, lease time.Duration) e2e.Report {
	f.records, f.seen, f.firstSeen = map[string][]byte{}, map[string]int{}, map[string]time.Time{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := e2e.NewClient("rk_fake", 8)
	defer c.Close()
	w := e2e.NewWriteTest(e2e.WriteTestConfig{Client: c, Targets: func() []string { return []string{srv.URL} },
		Keys: 40, Clients: 4, Prefix: "fake", Lease: lease})
	w.Start(ctx)
	w.Finish()
	w.Verify(ctx)
	return w.Check(ctx, srv.URL)
}

// hasProblem reports whether a problem or a loss of r names word.
func hasProblem(r e2e.Report, word string) bool {
	for _, p := range append(r.Problems, r.Losses...) {
		if strings.Contains(p, word) {
			return true
		}
	}
	return false
}

// TestWriteTestCatches shows that the checks the crash, scale-out and fault tests
// rely on fail on a server that doubles, loses or blocks writes, and pass on one
// that does not.
func TestWriteTestCatches(t *testing.T) {
	if r := runFake(t, &fakeAPI{}, time.Minute); len(r.Problems)+len(r.Losses) > 0 || r.NetErrors == 0 {
		t.Errorf("a correct server: %s %v (want no problems and some cut answers)", r, r.Problems)
	}
	if r := runFake(t, &fakeAPI{ignoreKeys: true}, time.Minute); !hasProblem(r, "DOUBLED") {
		t.Errorf("a server that ignores keys was not caught: %s %v", r, r.Problems)
	}
	if r := runFake(t, &fakeAPI{loseEvery: 7}, time.Minute); !hasProblem(r, "LOST") || r.Lost == 0 {
		t.Errorf("a server that loses acknowledged writes was not caught: %s %v", r, r.Problems)
	}
	if r := runFake(t, &fakeAPI{blockFor: 250 * time.Millisecond}, 100*time.Millisecond); !hasProblem(r, "BLOCKED") {
		t.Errorf("a server that blocks keys past the lease was not caught: %s %v", r, r.Problems)
	}
	if r := runFake(t, &fakeAPI{lostOutcome: "unknown"}, time.Minute); len(r.Problems)+len(r.Losses) > 0 || r.Unknown == 0 {
		t.Errorf("a server that says unknown of a committed write: %s %v (want no problems)", r, r.Problems)
	}
	if r := runFake(t, &fakeAPI{lostOutcome: "not_executed"}, time.Minute); !hasProblem(r, "UNTRUE") {
		t.Errorf("a server that says not_executed of a committed write was not caught: %s %v", r, r.Problems)
	}
}
