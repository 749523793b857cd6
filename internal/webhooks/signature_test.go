package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/webhooks"
)

// TestSignFollowsTheContract: v1 is the hex HMAC-SHA256 of "<t>.<raw body>" keyed with
// the secret, and VerifySignature accepts exactly that within the tolerance.
func TestSignFollowsTheContract(t *testing.T) {
	secret, body := "whsec_test", []byte(`{"id":"evt_1"}`)
	at := time.Unix(1735689600, 0)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("1735689600." + string(body)))
	want := "t=1735689600,v1=" + hex.EncodeToString(m.Sum(nil))
	if got := webhooks.Sign(secret, at, body); got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		now time.Time
		ok  bool
	}{
		{at, true}, {at.Add(webhooks.Tolerance), true}, {at.Add(-webhooks.Tolerance), true},
		{at.Add(webhooks.Tolerance + time.Second), false}, {at.Add(-webhooks.Tolerance - time.Second), false},
	} {
		err := webhooks.VerifySignature(secret, want, body, tc.now)
		if (err == nil) != tc.ok {
			t.Errorf("at now=%v: %v", tc.now.Sub(at), err)
		}
	}
	// Spaces after commas and unknown schemes are tolerated.
	if err := webhooks.VerifySignature(secret, "t=1735689600, v0=abc, "+want[len("t=1735689600,"):], body, at); err != nil {
		t.Errorf("tolerant parse: %v", err)
	}
}

func TestSourceNames(t *testing.T) {
	for name, ok := range map[string]bool{"scanner": true, "Scanner-1.prod_x": true, "": false, "-x": false,
		"a/b": false, "a b": false, "..": false, string(make([]byte, 101)): false} {
		if webhooks.ValidSourceName(name) != ok {
			t.Errorf("ValidSourceName(%q) = %v", name, !ok)
		}
	}
}
