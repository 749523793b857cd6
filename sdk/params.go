package riskapi

import (
	"fmt"
	"net/http"
	"strings"
)

// Params holds per-request options. Every params struct embeds it, so a call
// is tuned in place: &riskapi.RiskCreateParams{Title: "…", Params:
// riskapi.Params{IdempotencyKey: "order-42-risk"}}.
type Params struct {
	// IdempotencyKey is sent as the Idempotency-Key header of a write (POST,
	// PUT, PATCH, DELETE). Empty: the SDK mints a UUID v4 once per call. In
	// both cases the same key goes out on every retry of the call. Give your
	// own key when the same logical operation may be submitted again from a
	// later call or process (e.g. after a crash) and must still run once;
	// the server accepts [A-Za-z0-9._-]{8,128} and answers 400
	// IDEMPOTENCY_KEY_INVALID otherwise. Ignored by reads.
	IdempotencyKey string

	// IfMatch is sent as the If-Match header of a write of a risk (Update,
	// Replace, DeleteWithParams): the ETag of the version the change was
	// made from, Risk.ETag() (e.g. `"3"`), or "*". The server then applies
	// the write only over that version and otherwise answers 412, returned
	// as a *StaleRiskError carrying the risk as stored now. Empty: no
	// If-Match. A keyed call that replays is answered from its record,
	// whatever IfMatch says (docs/idempotency.md).
	IfMatch string

	// Headers are added to every attempt of the request. They cannot
	// replace the headers the SDK manages (Authorization, Idempotency-Key,
	// Content-Type, Content-Length, Accept): use the fields for those.
	Headers http.Header
}

// managedHeaders are set by the SDK and win over Params.Headers, so that a
// stray header cannot desynchronise authentication or the idempotency key.
var managedHeaders = map[string]bool{
	"Authorization":   true,
	"Idempotency-Key": true,
	"Content-Type":    true,
	"Content-Length":  true,
	"Accept":          true,
	"If-Match":        true,
}

func isManagedHeader(name string) bool {
	return managedHeaders[http.CanonicalHeaderKey(strings.TrimSpace(name))]
}

// checkHeaders rejects header names and values that net/http would refuse
// on every attempt: caught here, they fail the call at once instead of being
// retried like a network error.
func checkHeaders(h http.Header) error {
	for name, values := range h {
		if name == "" || strings.IndexFunc(name, func(r rune) bool {
			return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
		}) >= 0 {
			return fmt.Errorf("riskapi: invalid header name %q", name)
		}
		for _, v := range values {
			if strings.IndexFunc(v, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) >= 0 {
				return fmt.Errorf("riskapi: invalid value for header %s", name)
			}
		}
	}
	return nil
}

// APIResponse describes the HTTP exchange behind a result. It is set as the
// LastResponse field of every returned resource (stripe-go style).
type APIResponse struct {
	// StatusCode is the HTTP status of the final attempt, e.g. 201.
	StatusCode int
	// Header holds the response headers of the final attempt.
	Header http.Header
	// RequestID is the server's X-Request-Id for the final attempt; quote it
	// when reporting a problem.
	RequestID string
	// IdempotencyKey is the Idempotency-Key sent with the call (the same on
	// every attempt); empty for reads.
	IdempotencyKey string
	// IdempotentReplayed reports the header Idempotent-Replayed: true, i.e.
	// the server did not run the request again but returned the stored
	// response of an earlier attempt with the same key, typically because
	// that attempt's response was lost.
	IdempotentReplayed bool
	// Attempts is how many attempts the SDK made for the call, 1 when it
	// was not retried. (For a request without a body, net/http may on its
	// own resend once, with the same headers, when a reused keep-alive
	// connection turns out to be closed; that is not counted.)
	Attempts int
}

func newAPIResponse(resp *http.Response, key string, attempts int) *APIResponse {
	return &APIResponse{
		StatusCode:         resp.StatusCode,
		Header:             resp.Header,
		RequestID:          resp.Header.Get("X-Request-Id"),
		IdempotencyKey:     key,
		IdempotentReplayed: strings.EqualFold(strings.TrimSpace(resp.Header.Get("Idempotent-Replayed")), "true"),
		Attempts:           attempts,
	}
}
