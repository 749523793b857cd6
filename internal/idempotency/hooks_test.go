package idempotency

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/requestid"
)

// TestOutcomeHookAndRequestID: OnOutcome hears every keyed request's key and
// outcome once — a panic included — and a settled record keeps the id of the request
// that settled it.
func TestOutcomeHookAndRequestID(t *testing.T) {
	et := newEngineTest(t)
	type heard struct {
		key     string
		outcome Outcome
	}
	var got []heard
	mw, err := Config{
		Store: et.store, Scope: func(echo.Context) (string, error) { return testScope, nil },
		Now: func() time.Time { return et.now }, TTL: time.Hour, Lease: time.Minute, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnOutcome: func(_ echo.Context, key string, o Outcome) { got = append(got, heard{key, o}) },
	}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	do := func(id, key, body string, h echo.HandlerFunc) {
		req := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(body))
		req = req.WithContext(requestid.With(req.Context(), id))
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		req.Header.Set(HeaderIdempotencyKey, key)
		c := echo.New().NewContext(req, httptest.NewRecorder())
		c.SetPath("/things")
		func() {
			defer func() { recover() }()
			mw(h)(c)
		}()
	}
	do("req-1", testKey, `{"name":"a"}`, et.created("a"))
	if rec := et.store.record(testRK); rec == nil || rec.RequestID != "req-1" {
		t.Errorf("completed record %+v, want request id req-1", rec)
	}
	do("req-2", testKey, `{"name":"a"}`, et.created("a"))
	do("req-3", testKey, `{"name":"b"}`, et.created("b"))
	other := "key-0002-abcd"
	do("req-4", other, `{}`, func(echo.Context) error { panic("boom") })
	if rec := et.store.record(RecordKey{Scope: testScope, Method: http.MethodPost, Path: "/things", Key: other}); rec == nil ||
		rec.State != StateFailed || rec.RequestID != "req-4" {
		t.Errorf("failed record %+v, want FAILED with request id req-4", rec)
	}
	want := []heard{{testKey, OutcomeExecuted}, {testKey, OutcomeReplayed}, {testKey, OutcomeKeyReused}, {other, OutcomeFailed}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(heard{})); diff != "" {
		t.Errorf("OnOutcome heard (-want +got):\n%s", diff)
	}
}
