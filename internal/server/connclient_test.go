package server

import (
	"net"
	"testing"
)

// TestConnClient: a client is an IPv4 address (an IPv4-mapped IPv6 one included),
// or an IPv6 /64, which a single host is routinely given whole.
func TestConnClient(t *testing.T) {
	t.Parallel()
	at := func(ip string) string { return connClient(&net.TCPAddr{IP: net.ParseIP(ip), Port: 4000}) }
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"198.51.100.7", "::ffff:198.51.100.7", true},
		{"198.51.100.7", "198.51.100.8", false},
	} {
		if got := at(tc.a) == at(tc.b); got != tc.same {
			t.Errorf("%s and %s one client: %v, want %v (%s, %s)", tc.a, tc.b, got, tc.same, at(tc.a), at(tc.b))
		}
	}
}
