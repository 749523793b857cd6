package eventhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/events/eventhttp"
)

// TestCaptureRecordsTheKeyTheEngineReads: the key an event carries is the
// Idempotency-Key as the engine reads it — trimmed of spaces and tabs, and none at
// all when the engine would refuse it (docs/idempotency.md, Sending a key) — never a
// reading of the header's own.
func TestCaptureRecordsTheKeyTheEngineReads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header []string
		want   string
	}{
		{"none", nil, ""},
		{"valid", []string{"key-1234.AB_c"}, "key-1234.AB_c"},
		{"surrounded by spaces and tabs", []string{" \tkey-12345678\t "}, "key-12345678"},
		{"too short", []string{"short"}, ""},
		{"a character outside the alphabet", []string{"key 12345678"}, ""},
		{"a vertical tab the engine does not trim", []string{"\vkey-12345678"}, ""},
		{"sent twice", []string{"key-12345678", "key-12345678"}, ""},
		{"empty", []string{""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodPost, "/v2/risks", nil)
			for _, v := range tc.header {
				req.Header.Add("Idempotency-Key", v)
			}
			e := echo.New()
			c := e.NewContext(req, httptest.NewRecorder())
			var got *events.Request
			err := eventhttp.Capture(eventhttp.Config{})(func(c echo.Context) error {
				got = events.RequestFrom(c.Request().Context())
				return nil
			})(c)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.IdempotencyKey != tc.want {
				t.Errorf("captured %+v, want the key %q", got, tc.want)
			}
		})
	}
}

// TestEventCarriesTheKeyTheEngineUsed: a create keyed " spaced-key-1 " emits an
// event whose key is the one the engine stored its record under, spaces trimmed: the
// same key sent bare is a replay of it.
func TestEventCarriesTheKeyTheEngineUsed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	create := func(k string) *apitest.Response {
		return env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key(k),
			JSON: map[string]any{"title": "DPA"}})
	}
	if got := create(" spaced-key-1\t").Expect(201).Header().Get("Idempotent-Replayed"); got != "false" {
		t.Fatalf("first send: Idempotent-Replayed %q, want false", got)
	}
	if got := create("spaced-key-1").Expect(201).Header().Get("Idempotent-Replayed"); got != "true" {
		t.Fatalf("the trimmed key: Idempotent-Replayed %q, want true (the engine's record)", got)
	}
	create("\vspaced-key-2").ExpectProblem(400, "IDEMPOTENCY_KEY_INVALID")
	evs := listEvents(t, env, a.Key, "")
	if len(evs) != 1 || evs[0].Request.IdempotencyKey == nil || *evs[0].Request.IdempotencyKey != "spaced-key-1" {
		t.Fatalf("events %+v, want one risk.created with the key spaced-key-1", evs)
	}
}
