package requestloghttp_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestResponsesMatchSpec: what the request-log routes answer is what
// docs/openapi.yaml says, status by status, on both versions.
func TestResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	spec := apitest.LoadSpec(t, "../../../docs/openapi.yaml")
	env := apitest.New(t)
	a := env.Tenant("Acme")
	session := login(t, env, a)
	created := apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"},
		Header: http.Header{"Idempotency-Key": {"spec-log-key-1"}}}).Expect(http.StatusCreated)
	apitest.Do(t, env, apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": ""},
		Header: http.Header{"Idempotency-Key": {"spec-log-key-2"}}}).Expect(http.StatusBadRequest)
	id := created.Header().Get("X-Request-Id")
	flush(t, env)

	for _, v := range []struct{ prefix, bearer string }{{"/v1", session}, {"/v2", a.Key}} {
		p, b := v.prefix, v.bearer
		for _, x := range []struct {
			name, path, bearer string
			status             int
		}{
			{"list", p + "/requests", b, 200},
			{"list filtered", p + "/requests?limit=1&idempotencyKey=spec-log-key-1&status=201&method=post&outcome=executed&since=2020-01-01T00:00:00Z&until=2100-01-01T00:00:00Z", b, 200},
			{"list bad filter", p + "/requests?status=abc", b, 400},
			{"list unauthenticated", p + "/requests", "", 401},
			{"get", p + "/requests/" + id, b, 200},
			{"get absent", p + "/requests/no-such-request", b, 404},
			{"get unauthenticated", p + "/requests/" + id, "", 401},
			{"key complete", p + "/idempotency-keys/spec-log-key-1?method=POST&path=/v2/risks", b, 200},
			{"key failed", p + "/idempotency-keys/spec-log-key-2?method=POST&path=/v2/risks", b, 200},
			{"key absent", p + "/idempotency-keys/spec-log-key-3?method=POST&path=/v2/risks", b, 404},
			{"key bad method", p + "/idempotency-keys/spec-log-key-1?method=GET&path=/v2/risks", b, 400},
			{"key unauthenticated", p + "/idempotency-keys/spec-log-key-1?method=POST&path=/v2/risks", "", 401},
		} {
			res := apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: x.path, Bearer: x.bearer})
			if res.Code != x.status {
				t.Errorf("%s %s: status %d, want %d: %s", p, x.name, res.Code, x.status, res.Body)
				continue
			}
			spec.Check(t, http.MethodGet, x.path, nil, res)
		}
	}
	for _, path := range []string{"/v2/requests", "/v2/requests/" + id, "/v2/idempotency-keys/spec-log-key-1?method=POST&path=/v2/risks"} {
		res := apitest.Do(t, env, apitest.Request{Method: http.MethodGet, Path: path, Bearer: a.ReadKey}).Expect(http.StatusForbidden)
		spec.Check(t, http.MethodGet, path, nil, res)
	}
}
