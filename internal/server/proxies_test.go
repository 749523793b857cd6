package server_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// TestTrustedProxiesNameTheClient: behind a proxy listed in TRUSTED_PROXIES the
// sign-in rate (20 at once, then one a second) counts each client by its
// X-Forwarded-For address, so one guesser does not hold up everyone behind the
// proxy; a connection from anywhere else is counted by its own address, whatever
// X-Forwarded-For it forges.
func TestTrustedProxiesNameTheClient(t *testing.T) {
	t.Parallel()
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24") // httptest's RemoteAddr is 192.0.2.1
	env := apitest.New(t, func(c *config.Config) {
		c.RateLimit.RPS, c.RateLimit.Burst = 100, 200
		c.HTTP.TrustedProxies = []*net.IPNet{proxies}
	})
	a := env.Tenant("Acme")
	guesses := 0
	login := func(remote, xff, password string) int {
		// Wrong passwords name unknown accounts, each another: the per-account
		// lockout (password_limit_test.go) is not what this test is about.
		email := a.Email
		if password == "wrong" {
			guesses++
			email = "nobody" + strconv.Itoa(guesses) + "@example.com"
		}
		req := httptest.NewRequest("POST", "/v1/sessions",
			strings.NewReader(`{"email":"`+email+`","password":"`+password+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = remote
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		return env.DoRaw(req).Code
	}
	// Wrong passwords until the network's sign-in rate refuses one: 20 at once, and
	// as many more as the bucket refilled (one a second) while a loaded machine
	// took more than a second over them.
	exhaust := func(remote string, xff func(i int) string) {
		t.Helper()
		start := time.Now()
		for i := 0; ; i++ {
			got := login(remote, xff(i), "wrong")
			if got == http.StatusTooManyRequests && i >= 20 {
				return
			}
			if got != http.StatusUnauthorized || i+1 > 20+int(time.Since(start)/time.Second) {
				t.Fatalf("wrong password %d from %s: %d after %v, want 401 for 20 and one a second more, then 429", i+1, remote, got, time.Since(start))
			}
		}
	}
	exhaust("192.0.2.1:4000", func(int) string { return "198.51.100.7" })
	if got := login("192.0.2.1:4001", "198.51.100.7", a.Password); got != http.StatusTooManyRequests {
		t.Errorf("the guesser's 21st attempt: %d, want 429", got)
	}
	// Another client behind the same proxy, and one whose own proxy chain ends at ours.
	if got := login("192.0.2.1:4002", "198.51.100.8", a.Password); got != http.StatusCreated {
		t.Errorf("another client behind the proxy: %d, want 201 (the guesser locked it out)", got)
	}
	if got := login("192.0.2.1:4003", "198.51.100.7, 198.51.100.9", a.Password); got != http.StatusCreated {
		t.Errorf("the rightmost untrusted address is the client: %d, want 201", got)
	}

	// Not a trusted proxy: X-Forwarded-For is ignored and the connection is counted.
	exhaust("203.0.113.5:5000", func(i int) string { return "198.51.100." + strconv.Itoa(i%250) })
	if got := login("203.0.113.5:5001", "198.51.100.99", a.Password); got != http.StatusTooManyRequests {
		t.Errorf("an untrusted connection forging X-Forwarded-For: %d, want 429", got)
	}
}
