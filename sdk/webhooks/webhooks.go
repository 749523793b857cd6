// Package webhooks verifies riskapi's webhook deliveries in Go receivers. riskapi
// signs every delivery as Standard Webhooks defines (https://www.standardwebhooks.com):
// headers webhook-id (the event id, the same on every retry: deduplicate on it),
// webhook-timestamp (unix seconds) and webhook-signature ("v1,<base64 HMAC-SHA256 of
// id.timestamp.body>", keyed by the base64-decoded secret after "whsec_").
//
// After an endpoint's secret is rolled (POST /v1/webhook-endpoints/{id}/roll-secret)
// and until the old one expires, each delivery carries two signatures, the new
// secret's and the old one's, space-separated: Verify accepts the delivery with
// either secret, so a receiver can switch to the new one at any time in the overlap.
//
// A test message, sent by POST /v1/webhook-endpoints/{id}/ping, has the type
// PingType and is signed the same way; it is never an event.
//
//	body, _ := io.ReadAll(r.Body)
//	if err := webhooks.Verify(body, r.Header, secret); err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
package webhooks

import (
	"errors"
	"fmt"
	"net/http"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// PingType is the type of the test message an endpoint's ping sends.
const PingType = "endpoint.ping"

// Errors of Verify; match them with errors.Is.
var (
	// ErrMissingHeaders: webhook-id, webhook-timestamp or webhook-signature is absent.
	ErrMissingHeaders = standardwebhooks.ErrRequiredHeaders
	// ErrBadSignature: no v1 signature matches the payload and secret.
	ErrBadSignature = standardwebhooks.ErrNoMatchingSignature
	// ErrTooOld and ErrTooNew: the timestamp is more than 5 minutes from now,
	// which refuses a replayed capture of an old delivery.
	ErrTooOld = standardwebhooks.ErrMessageTooOld
	ErrTooNew = standardwebhooks.ErrMessageTooNew
	// ErrBadSecret: secret is not "whsec_" followed by standard base64.
	ErrBadSecret = errors.New("webhooks: the secret is not whsec_ followed by base64")
)

// Verify reports whether payload — the request body exactly as received — was
// signed by riskapi with the endpoint's secret ("whsec_…", shown once when the
// endpoint was created) within the last 5 minutes. It returns nil when it was.
//
// Errors: ErrMissingHeaders, ErrBadSignature, ErrTooOld, ErrTooNew, ErrBadSecret
// (wrapped; use errors.Is), or a malformed timestamp header.
func Verify(payload []byte, headers http.Header, secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil || secret == "" {
		return ErrBadSecret
	}
	if err := wh.Verify(payload, headers); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	return nil
}
