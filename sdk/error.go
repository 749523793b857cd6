package riskapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// maxErrorBody caps how much of a non-2xx body is read: a problem document is
// small, and a misbehaving proxy must not make the client read without bound.
const maxErrorBody = 64 << 10

// Codes of the error catalogue (docs/errors.md). Compare them with
// Error.Code, or use the Err… sentinels with errors.Is.
const (
	CodeValidationFailed             = "VALIDATION_FAILED"               // 400: malformed or invalid input
	CodeIdempotencyKeyInvalid        = "IDEMPOTENCY_KEY_INVALID"         // 400: key not [A-Za-z0-9._-]{8,128}, or sent twice
	CodeIdempotencyKeyRequired       = "IDEMPOTENCY_KEY_REQUIRED"        // 400: the server requires a key (never with this SDK)
	CodeUnauthenticated              = "UNAUTHENTICATED"                 // 401: missing, bad or revoked API key
	CodeForbidden                    = "FORBIDDEN"                       // 403: the key lacks the scope
	CodeNotFound                     = "NOT_FOUND"                       // 404: absent, or another tenant's
	CodeMethodNotAllowed             = "METHOD_NOT_ALLOWED"              // 405: known path, wrong method
	CodeIdempotencyRequestInProgress = "IDEMPOTENCY_REQUEST_IN_PROGRESS" // 409: same key still running; retried
	CodePreconditionFailed           = "PRECONDITION_FAILED"             // 412: If-Match or If-Unmodified-Since did not hold (a risk's: *StaleRiskError)
	CodePreconditionRequired         = "PRECONDITION_REQUIRED"           // 428: the server requires If-Match on risk writes (Params.IfMatch)
	CodePayloadTooLarge              = "PAYLOAD_TOO_LARGE"               // 413: body over the server's limit
	CodeHeadersTooLarge              = "HEADERS_TOO_LARGE"               // 431: header fields over 1 MB
	CodeUnsupportedMediaType         = "UNSUPPORTED_MEDIA_TYPE"          // 415: sign-in without Content-Type: application/json
	CodeRangeNotSatisfiable          = "RANGE_NOT_SATISFIABLE"           // 416: Range outside the download's bytes
	CodeIdempotencyKeyReused         = "IDEMPOTENCY_KEY_REUSED"          // 422: same key, different request
	CodeIdempotencyUnsupportedRoute  = "IDEMPOTENCY_UNSUPPORTED_ROUTE"   // 422: key sent to a route without idempotency
	CodeRateLimited                  = "RATE_LIMITED"                    // 429: retried after Retry-After
	CodeInternal                     = "INTERNAL"                        // 500: server bug; not retried
	CodeStoreUnavailable             = "STORE_UNAVAILABLE"               // 503: database unreachable or full; retried
	CodeImportInProgress             = "IMPORT_IN_PROGRESS"              // 409: the tenant's other import is running; retried after Retry-After
	CodeConcurrencyLimited           = "CONCURRENCY_LIMITED"             // 429: too many of the tenant's costly reads at once; retried after Retry-After
	CodeQueryTimeout                 = "QUERY_TIMEOUT"                   // 503: a read ran past the server's QUERY_TIMEOUT; retried after Retry-After
	CodeAPIKeyExpired                = "API_KEY_EXPIRED"                 // 401: the key's expiresAt (or its roll's overlap) has passed
	CodeIPNotAllowed                 = "IP_NOT_ALLOWED"                  // 403: the client address is outside the key's allowedCidrs
	CodeAPIVersionUnknown            = "API_VERSION_UNKNOWN"             // 400: Riskapi-Version names no version; not retried
	CodeAPIVersionMoveRefused        = "API_VERSION_MOVE_REFUSED"        // 400: the pin may not move back there; not retried
	CodeOwnerUserUnknown             = "OWNER_USER_UNKNOWN"              // 400: owner.userId is no user of the tenant; not retried
	CodeSelfApproval                 = "SELF_APPROVAL"                   // 403: the requester of an acceptance cannot decide it
	CodeAcceptanceDecided            = "ACCEPTANCE_DECIDED"              // 409: the acceptance is no longer pending
)

// Outcomes of a 503 STORE_UNAVAILABLE, the value of Error.Outcome
// (docs/errors.md).
const (
	// OutcomeNotExecuted: nothing was done; a retry cannot do it twice.
	OutcomeNotExecuted = "not_executed"
	// OutcomeUnknown: the write may or may not have been done. Retrying with
	// the same idempotency key is safe (a done write is replayed); a new key
	// may do it twice.
	OutcomeUnknown = "unknown"
)

// Sentinel errors, one per code. errors.Is(err, ErrNotFound) is true when err
// is, or wraps, an *Error whose Code is NOT_FOUND (see Error.Is). They are
// matched by code only: never modify them.
var (
	ErrValidationFailed             = &Error{Code: CodeValidationFailed}
	ErrIdempotencyKeyInvalid        = &Error{Code: CodeIdempotencyKeyInvalid}
	ErrIdempotencyKeyRequired       = &Error{Code: CodeIdempotencyKeyRequired}
	ErrUnauthenticated              = &Error{Code: CodeUnauthenticated}
	ErrForbidden                    = &Error{Code: CodeForbidden}
	ErrNotFound                     = &Error{Code: CodeNotFound}
	ErrIdempotencyRequestInProgress = &Error{Code: CodeIdempotencyRequestInProgress}
	ErrPreconditionFailed           = &Error{Code: CodePreconditionFailed}
	ErrPreconditionRequired         = &Error{Code: CodePreconditionRequired}
	ErrPayloadTooLarge              = &Error{Code: CodePayloadTooLarge}
	ErrHeadersTooLarge              = &Error{Code: CodeHeadersTooLarge}
	ErrUnsupportedMediaType         = &Error{Code: CodeUnsupportedMediaType}
	ErrRangeNotSatisfiable          = &Error{Code: CodeRangeNotSatisfiable}
	ErrIdempotencyKeyReused         = &Error{Code: CodeIdempotencyKeyReused}
	ErrIdempotencyUnsupportedRoute  = &Error{Code: CodeIdempotencyUnsupportedRoute}
	ErrRateLimited                  = &Error{Code: CodeRateLimited}
	ErrInternal                     = &Error{Code: CodeInternal}
	ErrStoreUnavailable             = &Error{Code: CodeStoreUnavailable}
	ErrImportInProgress             = &Error{Code: CodeImportInProgress}
	ErrConcurrencyLimited           = &Error{Code: CodeConcurrencyLimited}
	ErrQueryTimeout                 = &Error{Code: CodeQueryTimeout}
	ErrAPIKeyExpired                = &Error{Code: CodeAPIKeyExpired}
	ErrIPNotAllowed                 = &Error{Code: CodeIPNotAllowed}
	ErrAPIVersionUnknown            = &Error{Code: CodeAPIVersionUnknown}
	ErrAPIVersionMoveRefused        = &Error{Code: CodeAPIVersionMoveRefused}
	ErrOwnerUserUnknown             = &Error{Code: CodeOwnerUserUnknown}
	ErrSelfApproval                 = &Error{Code: CodeSelfApproval}
	ErrAcceptanceDecided            = &Error{Code: CodeAcceptanceDecided}
)

// Error is a non-2xx answer of the server, decoded from its RFC 9457
// problem+json body. A call that fails this way returns an *Error (after any
// retries, the one of the last attempt); test it with errors.As, or with
// errors.Is against the Err… sentinels.
//
// A body that is not problem+json (e.g. a proxy's HTML 502 page) still gives
// an *Error: Status is set, Code is empty, Title is the status text and
// Detail the start of the body.
type Error struct {
	// Status is the HTTP status code, e.g. 422. It is taken from the
	// status line, which wins over the body's "status".
	Status int
	// Code is the stable, machine-readable reason, e.g.
	// "IDEMPOTENCY_KEY_REUSED" (one of the Code… constants). Branch on it,
	// never on Title or Detail.
	Code string
	// Type is the problem type URI; "about:blank" or empty when the server
	// gives none.
	Type string
	// Title is a short human-readable summary of the problem type.
	Title string
	// Detail explains this occurrence for a human.
	Detail string
	// RequestID identifies the request in the server's logs: the body's
	// "requestId", else the X-Request-Id header.
	RequestID string
	// Errors lists the offending fields of a VALIDATION_FAILED answer.
	Errors []FieldError
	// IdempotencyKey is the key the failed call sent; empty for reads.
	IdempotencyKey string
	// RetryAfter is the wait the server asked for with Retry-After (409,
	// 429, 503), zero when absent.
	RetryAfter time.Duration
	// Outcome is what a 503 STORE_UNAVAILABLE says of the request:
	// OutcomeNotExecuted (nothing was done) or OutcomeUnknown (the write ran
	// and its commit may or may not have happened). Empty for other answers.
	// The SDK retries both with the same key; when the retries run out, an
	// unknown outcome means: retry the call with the same
	// Params.IdempotencyKey later, or look the key up, but never send the
	// write again under a new key (docs/sdk.md).
	Outcome string
	// Body is the raw response body, at most 64 KiB of it.
	Body []byte
}

// FieldError names one invalid input field of a VALIDATION_FAILED answer.
type FieldError struct {
	// Row is the record of an imported CSV the error is in (the header is
	// row 1); 0 for every other request.
	Row int `json:"row,omitempty"`
	// Field is the JSON name of the field, e.g. "title".
	Field string `json:"field"`
	// Detail says what is wrong with it.
	Detail string `json:"detail"`
}

// Error returns "riskapi: <status> <code>: <detail> (request <id>)", leaving
// out the parts the server did not give. For VALIDATION_FAILED the detail
// already names the fields; Errors has them one by one.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("riskapi: ")
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d ", e.Status)
	}
	switch {
	case e.Code != "":
		b.WriteString(e.Code)
	case e.Title != "":
		b.WriteString(e.Title)
	default:
		b.WriteString("error")
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request %s)", e.RequestID)
	}
	return b.String()
}

// Is makes errors.Is match by code: it reports whether target is an *Error
// with the same non-empty Code. A target with an empty Code and a non-zero
// Status matches by status instead, so errors.Is(err, &riskapi.Error{Status:
// 404}) works too.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t == nil {
		return false
	}
	if t.Code != "" {
		return t.Code == e.Code
	}
	return t.Status != 0 && t.Status == e.Status
}

// problem is the wire form of an RFC 9457 body. Status is decoded loosely
// because it is informative only (the status line wins).
type problem struct {
	Type      string          `json:"type"`
	Title     string          `json:"title"`
	Status    json.RawMessage `json:"status"`
	Detail    string          `json:"detail"`
	Code      string          `json:"code"`
	RequestID string          `json:"requestId"`
	Errors    []FieldError    `json:"errors"`
	Outcome   string          `json:"outcome"`
}

// newError builds the *Error of a non-2xx response, reading at most
// maxErrorBody bytes of its body. It does not close the body. A failure to
// read the body is not reported: the status alone still makes a useful error.
func newError(resp *http.Response, key string, now time.Time) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{
		Status:         resp.StatusCode,
		Body:           body,
		IdempotencyKey: key,
		RetryAfter:     parseRetryAfter(resp.Header.Get("Retry-After"), now),
	}
	var p problem
	if len(body) > 0 && json.Unmarshal(body, &p) == nil {
		e.Type, e.Title, e.Detail, e.Code = p.Type, p.Title, p.Detail, p.Code
		e.RequestID, e.Errors, e.Outcome = p.RequestID, p.Errors, p.Outcome
	} else {
		e.Title = http.StatusText(resp.StatusCode)
		e.Detail = snippet(body)
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	return e
}

// snippet returns the start of a non-JSON error body as one line of valid
// UTF-8 (invalid bytes dropped), short enough for a log line.
func snippet(body []byte) string {
	const max = 200
	if !utf8.Valid(body) {
		body = []byte(strings.ToValidUTF8(string(body), ""))
	}
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
