package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/problem"
)

// SignatureHeader carries a delivery's signature: "t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<raw body>" keyed with the source's secret>" (docs/uploads-and-webhooks.md,
// Signing a delivery). Several v1 entries may be sent, as when a sender rotates secrets; one
// matching is enough.
const SignatureHeader = "Webhook-Signature"

// Tolerance is how far a delivery's timestamp may be from the receiver's clock, in
// either direction: a captured delivery cannot be replayed later than this (and
// within it, the event ID makes a replay a harmless duplicate).
const Tolerance = 5 * time.Minute

// Sign returns the SignatureHeader value for body sent at t with secret: what a
// sender computes, and what tests and documentation use.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// VerifySignature checks header against body and secret, and its timestamp against
// now within Tolerance. The comparison takes constant time (hmac.Equal). Errors:
// *problem.Problem VALIDATION_FAILED naming the Webhook-Signature header: missing,
// malformed, no matching signature, or a timestamp outside the tolerance.
func VerifySignature(secret, header string, body []byte, now time.Time) error {
	bad := func(detail string) error { return problem.Invalid(SignatureHeader, detail) }
	if header == "" {
		return bad("is required")
	}
	var ts string
	var sigs [][]byte
	for _, item := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return bad("must look like t=<unix seconds>,v1=<hex HMAC-SHA256>")
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil && len(sig) == sha256.Size {
				sigs = append(sigs, sig)
			}
		}
		// Other schemes (future versions) are ignored.
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return bad("must look like t=<unix seconds>,v1=<hex HMAC-SHA256>")
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range sigs {
		ok = hmac.Equal(s, want) || ok
	}
	if !ok {
		return bad("does not match the body and the source's secret")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return bad("timestamp is more than 5 minutes away from the server's clock")
	}
	return nil
}
