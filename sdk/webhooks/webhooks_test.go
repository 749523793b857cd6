package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/riskapi/riskapi/sdk/webhooks"
)

// sign follows the Standard Webhooks specification by hand, so Verify is checked
// against the specification rather than against the library it wraps.
func sign(secret []byte, id string, ts time.Time, body string) http.Header {
	mac := hmac.New(sha256.New, secret)
	fmt.Fprintf(mac, "%s.%d.%s", id, ts.Unix(), body)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", "v0,bm9wZQ== v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return h
}

func TestVerify(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	body := `{"id":"evt_1","type":"risk.created"}`
	now := time.Now()
	for _, tc := range []struct {
		name    string
		body    string
		headers http.Header
		secret  string
		want    error
	}{
		{"valid", body, sign(key, "evt_1", now, body), secret, nil},
		{"body changed", body + " ", sign(key, "evt_1", now, body), secret, webhooks.ErrBadSignature},
		{"other secret", body, sign([]byte("another key of 32 bytes........."), "evt_1", now, body), secret, webhooks.ErrBadSignature},
		{"id changed", body, func() http.Header {
			h := sign(key, "evt_1", now, body)
			h.Set("webhook-id", "evt_2")
			return h
		}(), secret, webhooks.ErrBadSignature},
		{"too old", body, sign(key, "evt_1", now.Add(-10*time.Minute), body), secret, webhooks.ErrTooOld},
		{"too new", body, sign(key, "evt_1", now.Add(10*time.Minute), body), secret, webhooks.ErrTooNew},
		{"no headers", body, http.Header{}, secret, webhooks.ErrMissingHeaders},
		{"secret not base64", body, sign(key, "evt_1", now, body), "whsec_%%%", webhooks.ErrBadSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhooks.Verify([]byte(tc.body), tc.headers, tc.secret)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestVerifyDuringASecretRoll: while a rolled endpoint secret overlaps, riskapi
// sends two v1 signatures, space-separated; a receiver holding either secret
// verifies the delivery, one holding neither does not.
func TestVerifyDuringASecretRoll(t *testing.T) {
	t.Parallel()
	oldKey, newKey := []byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")
	body := `{"id":"evt_1","type":"risk.created"}`
	now := time.Now()
	h := sign(newKey, "evt_1", now, body)
	h.Set("webhook-signature", h.Get("webhook-signature")+" "+sign(oldKey, "evt_1", now, body).Get("webhook-signature")[len("v0,bm9wZQ== "):])
	for _, key := range [][]byte{oldKey, newKey} {
		if err := webhooks.Verify([]byte(body), h, "whsec_"+base64.StdEncoding.EncodeToString(key)); err != nil {
			t.Fatalf("a secret of the overlap does not verify: %v", err)
		}
	}
	other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key of 32 bytes........."))
	if err := webhooks.Verify([]byte(body), h, other); !errors.Is(err, webhooks.ErrBadSignature) {
		t.Fatalf("a third secret: %v, want ErrBadSignature", err)
	}
}
