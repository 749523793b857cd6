package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// Resolver looks host names up; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrAddressNotAllowed: the destination is a loopback, private, link-local, metadata
// or otherwise special-purpose address, and private addresses are not allowed.
var ErrAddressNotAllowed = errors.New("the address is not allowed as a webhook destination")

// Guard keeps deliveries off internal networks (SSRF). It checks an endpoint's
// address when the URL is saved and again on every connection, on the address
// actually dialled, so a name that re-resolves to an internal address later (DNS
// rebinding) is refused too. Denied: every IANA special-purpose range —
// loopback, RFC 1918 private, link-local (with the 169.254.169.254 metadata
// service), CGNAT, unspecified, multicast, reserved — per code.dny.dev/ssrf.
type Guard struct {
	// AllowPrivate turns the guard off (WEBHOOK_ALLOW_PRIVATE: tests, on-premise).
	AllowPrivate bool
	// Resolver resolves host names, at save time and at connect time. Optional.
	// Default net.DefaultResolver.
	Resolver Resolver
}

var guardian = ssrf.New(ssrf.WithAnyPort())

func (g *Guard) resolver() Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// allowed returns nil when ip may be a destination.
func (g *Guard) allowed(ip netip.Addr) error {
	if g.AllowPrivate {
		return nil
	}
	// An IPv4-mapped IPv6 address is its IPv4 address on the wire.
	if err := guardian.SafeAddr(ip.Unmap()); err != nil {
		return ErrAddressNotAllowed
	}
	return nil
}

// lookup resolves host (or parses it as an address literal).
func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ips, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return nil, &net.DNSError{Err: "could not be resolved", Name: host, IsNotFound: true}
	}
	return ips, nil
}

// CheckURL refuses a URL whose host resolves to any address the guard denies, or
// does not resolve. With AllowPrivate it accepts any host without resolving it.
// Errors are client-safe sentences.
func (g *Guard) CheckURL(ctx context.Context, u *url.URL) error {
	if g.AllowPrivate {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := g.lookup(ctx, u.Hostname())
	if err != nil {
		return fmt.Errorf("host %s could not be resolved", u.Hostname())
	}
	for _, ip := range ips {
		if g.allowed(ip) != nil {
			return fmt.Errorf("must not point at a loopback, private, link-local or other internal address (%s is or resolves to one)", u.Hostname())
		}
	}
	return nil
}

// DialContext connects to addr ("host:port") for an http.Transport: it resolves the
// host through the guard's resolver and dials the first usable address, each
// checked by the dialer's Control hook on the socket's actual destination.
// Errors: ErrAddressNotAllowed when every address was denied; the dialer's.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port %q", portStr)
	}
	ips, err := g.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 5 * time.Second, Control: g.control}
	var last error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// control runs before connect(2) with the address being connected to.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return ErrAddressNotAllowed
	}
	return g.allowed(ap.Addr())
}
