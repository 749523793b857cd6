package apitest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Spec checks real responses against an OpenAPI document (docs/openapi.yaml).
type Spec struct {
	router routers.Router
}

// LoadSpec loads and validates the OpenAPI document at path (relative to the test's
// package folder), failing tb if it is invalid.
func LoadSpec(tb testing.TB, path string) *Spec {
	tb.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err == nil {
		err = doc.Validate(loader.Context)
	}
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		tb.Fatalf("router from %s: %v", path, err)
	}
	return &Spec{router: router}
}

// Check fails tb unless res — the answer to a request of method to path with header
// — is documented: its route and status exist and its headers and body match their
// schemas. Request bodies are not checked (a multipart one is consumed already).
func (s *Spec) Check(tb testing.TB, method, path string, header http.Header, res *Response) {
	tb.Helper()
	req := httptest.NewRequest(method, "http://localhost:8080"+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		tb.Errorf("%s %s is not in the spec: %v", method, path, err)
		return
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true, MultiError: true, ExcludeRequestBody: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.Code,
		Header: res.Header(), Options: opts}
	out.SetBodyBytes(res.Body.Bytes())
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		tb.Errorf("%s %s → %d does not match the spec: %v\nbody: %.500s", method, path, res.Code, err, res.Body.String())
	}
}
