// Package ids mints riskapi's resource identifiers: a type prefix, an underscore and
// 32 lowercase hex digits of a UUIDv7 (RFC 9562), so IDs sort by creation time and
// cursor pagination over them is stable.
package ids

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Prefixes of riskapi's resource IDs.
const (
	Tenant     = "ten"
	User       = "usr"
	APIKey     = "key"
	Risk       = "risk"
	Attachment = "att"
	Webhook    = "whk"
	// RequestLog names request-log entries; internal, the list's cursor only.
	RequestLog = "log"
	// Request names the request ids riskapi mints (X-Request-Id, Stripe's "req_").
	Request = "req"
	Event   = "evt"
	// Endpoint names an outbound webhook endpoint (Stripe's "we_").
	Endpoint = "we"
	// Audit names audit-log entries (docs/audit-log.md).
	Audit = "aud"
	// Sandbox names a tenant's sandbox, the data scope of its test mode
	// (docs/sandboxes.md): SandboxOf derives it from the tenant's ID.
	Sandbox = "sbx"
	// Review, Action and Acceptance name a risk's reviews, treatment actions and
	// acceptances (docs/register.md).
	Review     = "rev"
	Action     = "act"
	Acceptance = "acc"
)

// SandboxOf returns the ID of tenant's sandbox: "sbx_" and the tenant ID's digits
// ("ten_0193…" → "sbx_0193…"). Derived, never stored apart, so any record's tenant
// ID says which mode it belongs to (Livemode) without a lookup.
func SandboxOf(tenant string) string {
	return Sandbox + "_" + strings.TrimPrefix(tenant, Tenant+"_")
}

// AccountOf returns the tenant whose data scope scope is: the tenant itself, or
// the tenant of a sandbox ("sbx_0193…" → "ten_0193…"). Users are the account's,
// shared by both modes (docs/sandboxes.md).
func AccountOf(scope string) string {
	if rest, ok := strings.CutPrefix(scope, Sandbox+"_"); ok {
		return Tenant + "_" + rest
	}
	return scope
}

// Livemode reports whether scope, a tenant ID or its sandbox's, holds live data.
func Livemode(scope string) bool { return !strings.HasPrefix(scope, Sandbox+"_") }

// New returns prefix + "_" + 32 hex digits, e.g. "risk_0193b2…".
func New(prefix string) string {
	u, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only if the system's random source does; nothing sane remains.
		panic("ids: " + err.Error())
	}
	return prefix + "_" + hex.EncodeToString(u[:])
}

// NewAt is New for an ID whose UUIDv7 time is t's millisecond (RFC 9562 section
// 5.7), for records whose age is read from their ID: the audit log sweeps by ID, so
// an entry's ID must carry the time the entry says it occurred, from whatever clock
// stamped it. Within the current millisecond it is New itself (monotonic in the
// process); otherwise New's random bits under t's timestamp.
func NewAt(prefix string, t time.Time) string {
	u, err := uuid.NewV7()
	if err != nil {
		panic("ids: " + err.Error())
	}
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	return prefix + "_" + hex.EncodeToString(u[:])
}

// Derived returns an ID with prefix that is a function of its arguments alone: the
// UUIDv7 time of at's millisecond and, for its random bits, those of a SHA-256 of
// key. A due-date notice's event takes Derived(Event, due moment, kind|object|date),
// so every instance that finds the same notice mints the same ID, and a moved date
// another (docs/register.md).
func Derived(prefix string, at time.Time, key string) string {
	sum := sha256.Sum256([]byte(key))
	var u uuid.UUID
	copy(u[:], sum[:16])
	ms := uint64(at.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // RFC 9562 variant
	return prefix + "_" + hex.EncodeToString(u[:])
}

// Before returns the smallest string above every ID with prefix whose UUIDv7 time
// is earlier than t's millisecond, and below every other: `id < Before(p, t)` selects,
// by the IDs' order alone, the records of prefix p minted (New, NewAt) before t.
func Before(prefix string, t time.Time) string {
	return fmt.Sprintf("%s_%012x", prefix, uint64(t.UnixMilli()))
}

var shape = regexp.MustCompile(`^[a-z]{2,8}_[0-9a-f]{32}$`)

// Valid reports whether id has prefix and the shape New produces. Handlers use it to
// answer 404 for malformed IDs without touching the store.
func Valid(prefix, id string) bool {
	return len(id) == len(prefix)+33 && id[:len(prefix)+1] == prefix+"_" && shape.MatchString(id)
}
