package idempotency

import (
	"net/http"
	"strings"
)

// HeaderIdempotencyKey is the request header (IETF draft "The Idempotency-Key HTTP
// Header Field"). HeaderReplayed marks keyed responses: "true" when the stored
// response was replayed, "false" when the request ran (after Stripe's header).
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
)

// Key length bounds (docs/idempotency.md, Sending a key).
const (
	MinKeyLength = 8
	MaxKeyLength = 128
)

// keyStatus is what a request says about its key.
type keyStatus int

const (
	keyAbsent keyStatus = iota
	keyValid
	keyInvalid
)

// KeyOf returns r's Idempotency-Key as the engine reads it (parseKey): trimmed, and
// "" when r has none or an invalid one, which the engine refuses with 400
// IDEMPOTENCY_KEY_INVALID before any handler runs. It is the one reading of the
// header for code outside the engine (eventhttp.Capture, for the key an event
// carries), so that nothing records a key the engine did not accept.
func KeyOf(r *http.Request) string {
	k, _ := parseKey(r.Header)
	return k
}

// parseKey returns the request's Idempotency-Key. The header name is matched without
// regard to case (Go canonicalises it), surrounding spaces are trimmed, and the value
// must be [A-Za-z0-9._-]{8,128}; two headers are invalid, as is an empty one.
func parseKey(h http.Header) (string, keyStatus) {
	vals := h.Values(HeaderIdempotencyKey)
	switch len(vals) {
	case 0:
		return "", keyAbsent
	case 1:
	default:
		return "", keyInvalid
	}
	k := strings.Trim(vals[0], " \t")
	if !ValidKey(k) {
		return "", keyInvalid
	}
	return k, keyValid
}

// ValidKey reports whether k matches [A-Za-z0-9._-]{8,128}.
func ValidKey(k string) bool {
	if len(k) < MinKeyLength || len(k) > MaxKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
