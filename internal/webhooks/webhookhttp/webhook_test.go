package webhookhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// sender posts signed deliveries for one source.
type sender struct {
	env    *apitest.Env
	source *webhooks.Source
}

func newSender(t *testing.T, env *apitest.Env, tenantID, name string) *sender {
	t.Helper()
	src, err := env.App.Webhooks.CreateSource(context.Background(), tenantID, name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(src.Secret, "whsec_") || !strings.HasPrefix(src.ID, "whk_") {
		t.Fatalf("source %+v", src)
	}
	return &sender{env: env, source: src}
}

func event(id, typ string, data map[string]any) string {
	b, _ := json.Marshal(map[string]any{"id": id, "type": typ, "data": data})
	return string(b)
}

// post sends body signed at the server's current time with the source's secret,
// plus header.
func (s *sender) post(t *testing.T, body string, header http.Header) *apitest.Response {
	t.Helper()
	h := http.Header{webhooks.SignatureHeader: {webhooks.Sign(s.source.Secret, s.env.Clock.Now(), []byte(body))}}
	for k, v := range header {
		h[k] = v
	}
	return s.raw(t, body, h)
}

// raw sends body with exactly header (no signature added).
func (s *sender) raw(t *testing.T, body string, header http.Header) *apitest.Response {
	t.Helper()
	res := s.env.Do(apitest.Request{Method: http.MethodPost, Path: "/webhooks/inbound/" + s.source.Name,
		Body: body, Header: header})
	res.T = t
	return res
}

type ack struct {
	Received  bool `json:"received"`
	Duplicate bool `json:"duplicate"`
}

func expectAck(t *testing.T, res *apitest.Response, duplicate bool) {
	t.Helper()
	var a ack
	res.Expect(http.StatusOK).Decode(&a)
	if !a.Received || a.Duplicate != duplicate {
		t.Errorf("ack %+v, want duplicate %v", a, duplicate)
	}
}

type risk struct {
	ID, Title, Status, Owner string
	Likelihood, Impact       *int
	RiskScore                *int
}

func risksOf(t *testing.T, env *apitest.Env, key string) []risk {
	t.Helper()
	var l struct{ Data []risk }
	res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks?limit=100", Bearer: key})
	res.T = t
	res.Expect(http.StatusOK).Decode(&l)
	return l.Data
}

func TestFindingLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	s := newSender(t, env, a.ID, "scanner")

	created := event("evt_1", "finding.created", map[string]any{"externalId": "FND-1042", "title": "Open S3 bucket",
		"category": "security", "likelihood": 4, "impact": 5})
	expectAck(t, s.post(t, created, nil), false)
	rs := risksOf(t, env, a.Key)
	if len(rs) != 1 || rs[0].Title != "Open S3 bucket" || rs[0].RiskScore == nil || *rs[0].RiskScore != 20 || rs[0].Status != "open" {
		t.Fatalf("risks after finding.created: %+v", rs)
	}
	if n := len(risksOf(t, env, b.Key)); n != 0 {
		t.Errorf("another tenant sees %d risks", n)
	}

	// A redelivery is acknowledged as a duplicate and processed no second time —
	// even if its body differs.
	expectAck(t, s.post(t, created, nil), true)
	expectAck(t, s.post(t, event("evt_1", "finding.created", map[string]any{"externalId": "FND-1042", "title": "Changed"}), nil), true)
	if rs := risksOf(t, env, a.Key); len(rs) != 1 || rs[0].Title != "Open S3 bucket" {
		t.Fatalf("risks after redeliveries: %+v", rs)
	}

	// finding.updated changes the fields it gives.
	expectAck(t, s.post(t, event("evt_2", "finding.updated", map[string]any{"externalId": "FND-1042", "status": "mitigated", "impact": 2}), nil), false)
	rs = risksOf(t, env, a.Key)
	if len(rs) != 1 || rs[0].Status != "mitigated" || *rs[0].Impact != 2 || *rs[0].RiskScore != 8 || rs[0].Title != "Open S3 bucket" {
		t.Fatalf("risk after finding.updated: %+v", rs)
	}

	// finding.created again for a known externalId (a new event ID) updates it.
	expectAck(t, s.post(t, event("evt_3", "finding.created", map[string]any{"externalId": "FND-1042", "title": "Open S3 bucket (prod)"}), nil), false)
	if rs := risksOf(t, env, a.Key); len(rs) != 1 || rs[0].Title != "Open S3 bucket (prod)" || rs[0].Status != "mitigated" {
		t.Fatalf("risk after a second finding.created: %+v", rs)
	}
}

// TestUpdateBeforeCreate: finding.updated about an unknown finding is 404 and not
// recorded, so its redelivery after the creation is processed.
func TestUpdateBeforeCreate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	update := event("evt_u", "finding.updated", map[string]any{"externalId": "FND-7", "owner": "alice"})
	s.post(t, update, nil).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	expectAck(t, s.post(t, event("evt_c", "finding.created", map[string]any{"externalId": "FND-7", "title": "Weak TLS"}), nil), false)
	expectAck(t, s.post(t, update, nil), false)
	if rs := risksOf(t, env, a.Key); len(rs) != 1 || rs[0].Owner != "alice" {
		t.Fatalf("risks: %+v", rs)
	}
}

func TestSignatureAndSource(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	other := newSender(t, env, a.ID, "other-source")
	body := event("evt_sig", "finding.created", map[string]any{"externalId": "FND-1", "title": "T"})
	now := env.Clock.Now()
	sig := func(secret string, at time.Time, b string) http.Header {
		return http.Header{webhooks.SignatureHeader: {webhooks.Sign(secret, at, []byte(b))}}
	}
	tests := []struct {
		name   string
		header http.Header
	}{
		{"no signature", nil},
		{"malformed", http.Header{webhooks.SignatureHeader: {"sha256=abc"}}},
		{"no v1", http.Header{webhooks.SignatureHeader: {"t=" + itoa(now.Unix())}}},
		{"bad hex", http.Header{webhooks.SignatureHeader: {"t=" + itoa(now.Unix()) + ",v1=zz"}}},
		{"another source's secret", sig(other.source.Secret, now, body)},
		{"another body", sig(s.source.Secret, now, body+" ")},
		{"timestamp changed", http.Header{webhooks.SignatureHeader: {strings.Replace(sig(s.source.Secret, now, body).Get(webhooks.SignatureHeader), "t="+itoa(now.Unix()), "t="+itoa(now.Unix()+1), 1)}}},
		{"6 minutes old", sig(s.source.Secret, now.Add(-6*time.Minute), body)},
		{"6 minutes ahead", sig(s.source.Secret, now.Add(6*time.Minute), body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.raw(t, body, tt.header).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
			if !strings.Contains(res.Body.String(), `"field":"Webhook-Signature"`) {
				t.Errorf("problem does not name the header: %s", res.Body)
			}
		})
	}
	if n := len(risksOf(t, env, a.Key)); n != 0 {
		t.Fatalf("refused deliveries created %d risks", n)
	}

	// Within the tolerance, and with a rotated secret listed beside the right one.
	h := sig(s.source.Secret, now.Add(-4*time.Minute), body)
	h.Set(webhooks.SignatureHeader, h.Get(webhooks.SignatureHeader)+",v1="+strings.Repeat("ab", 32))
	expectAck(t, s.raw(t, body, h), false)

	// The server's clock decides: the same delivery replayed 6 minutes later is stale.
	env.Clock.Advance(6 * time.Minute)
	s.raw(t, body, h).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")

	// Unknown source: 401, whatever the signature.
	res := env.Do(apitest.Request{Method: http.MethodPost, Path: "/webhooks/inbound/nobody", Body: body,
		Header: sig(s.source.Secret, env.Clock.Now(), body)})
	res.T = t
	res.ExpectProblem(http.StatusUnauthorized, "UNAUTHENTICATED")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestIdempotencyKeyRefused: the route dedupes by event ID; a key is refused with 422
// before anything is read — JSON or multipart, signed or not — and nothing happens.
func TestIdempotencyKeyRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	body := event("evt_key", "finding.created", map[string]any{"externalId": "FND-9", "title": "T"})
	s.post(t, body, http.Header{"Idempotency-Key": {"webhook-key-1"}}).
		ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
	s.raw(t, "not even signed", http.Header{"Idempotency-Key": {"webhook-key-2"}}).
		ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
	form, ct := apitest.Multipart("", apitest.FilePart("file", "big.bin", "", strings.Repeat("x", 2<<20)))
	res := env.Upload("/webhooks/inbound/scanner", "", http.Header{"Idempotency-Key": {"webhook-key-3"}}, form, ct)
	res.T = t
	res.ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_UNSUPPORTED_ROUTE")
	if files := env.StoredFiles(); len(files) != 0 {
		t.Errorf("a multipart delivery left files: %v", files)
	}
	// Without the key the same multipart body is simply not a delivery.
	res = env.Upload("/webhooks/inbound/scanner", "", nil, form[:1<<10], ct)
	res.T = t
	res.ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if n := len(risksOf(t, env, a.Key)); n != 0 {
		t.Errorf("%d risks created", n)
	}
	// The event was not recorded: delivered properly, it is processed.
	expectAck(t, s.post(t, body, nil), false)
}

func TestInvalidDeliveries(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	tests := []struct {
		name, body, field string
	}{
		{"not JSON", "{", "body"},
		{"no id", `{"type":"finding.created","data":{"externalId":"F","title":"T"}}`, "id"},
		{"empty id", event("", "finding.created", map[string]any{"externalId": "F", "title": "T"}), "id"},
		{"unknown type", event("e1", "finding.deleted", map[string]any{"externalId": "F", "title": "T"}), "type"},
		{"no data", `{"id":"e2","type":"finding.created"}`, "data"},
		{"no externalId", event("e3", "finding.created", map[string]any{"title": "T"}), "data/externalId"},
		{"no title", event("e4", "finding.created", map[string]any{"externalId": "F"}), "data/title"},
		{"likelihood out of range", event("e5", "finding.created", map[string]any{"externalId": "F", "title": "T", "likelihood": 9}), "data/likelihood"},
		{"null title", event("e6", "finding.created", map[string]any{"externalId": "F", "title": nil}), "data/title"},
		{"unknown member", event("e7", "finding.created", map[string]any{"externalId": "F", "title": "T", "colour": "red"}), "data/colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.post(t, tt.body, nil).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
			var p struct{ Errors []struct{ Field string } }
			res.Decode(&p)
			if len(p.Errors) == 0 || p.Errors[0].Field != tt.field {
				t.Errorf("errors %+v, want field %q", p.Errors, tt.field)
			}
		})
	}
	// A refused delivery is not recorded: the same ID, fixed, is processed.
	expectAck(t, s.post(t, event("e5", "finding.created", map[string]any{"externalId": "F", "title": "T", "likelihood": 2}), nil), false)

	big := event("e8", "finding.created", map[string]any{"externalId": "F", "title": "T", "description": strings.Repeat("x", 1<<20)})
	s.post(t, big, nil).ExpectProblem(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
}

// TestConcurrentRedeliveries: deliveries of one event racing each other are processed
// exactly once.
func TestConcurrentRedeliveries(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	body := event("evt_race", "finding.created", map[string]any{"externalId": "FND-R", "title": "Race"})
	const n = 8
	var wg sync.WaitGroup
	results := make([]ack, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := s.post(t, body, nil)
			if res.Code == http.StatusOK {
				json.Unmarshal(res.Body.Bytes(), &results[i])
			} else {
				t.Errorf("delivery %d: %d %s", i, res.Code, res.Body)
			}
		}()
	}
	wg.Wait()
	first := 0
	for _, r := range results {
		if r.Received && !r.Duplicate {
			first++
		}
	}
	if first != 1 {
		t.Errorf("%d deliveries processed, want 1: %+v", first, results)
	}
	if rs := risksOf(t, env, a.Key); len(rs) != 1 {
		t.Errorf("%d risks, want 1", len(rs))
	}
}

// TestConcurrentCreationsOfOneFinding: finding.created events with different IDs about
// one finding, racing, make one risk (the others update it), never a conflict.
func TestConcurrentCreationsOfOneFinding(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	s := newSender(t, env, a.ID, "scanner")
	const n = 6
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := event("evt_"+strconv.Itoa(i), "finding.created", map[string]any{"externalId": "FND-SAME", "title": "Same finding"})
			if res := s.post(t, body, nil); res.Code != http.StatusOK {
				t.Errorf("delivery %d: %d %s", i, res.Code, res.Body)
			}
		}()
	}
	wg.Wait()
	if rs := risksOf(t, env, a.Key); len(rs) != 1 {
		t.Errorf("%d risks, want 1", len(rs))
	}
}
