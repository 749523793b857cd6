package server_test

import (
	"net/http"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

func TestBodiesMustBeJSONAndTitlesNotBlank(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	// The handler reads JSON only, as the fingerprint counts it: a text/plain body
	// would be fingerprinted by its bytes but read as JSON.
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T"}`,
		Header: http.Header{"Content-Type": {"text/plain"}}}).ExpectProblem(400, "VALIDATION_FAILED")
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"T"}`,
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}}).Expect(201)
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Body: `{"title":"   "}`}).ExpectProblem(400, "VALIDATION_FAILED")
	if n := riskCount(t, env, a.ID); n != 1 {
		t.Fatalf("%d risks, want 1", n)
	}
}
