package tenants

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/problem"
)

// MaxRollOverlap bounds how long a rolled key's old secret keeps working
// (POST /v1/api-keys/{id}/roll: expiresIn 0–604800 seconds).
const MaxRollOverlap = 7 * 24 * time.Hour

// MaxAllowedCidrs bounds a key's allowedCidrs.
const MaxAllowedCidrs = 32

// refusalEvery throttles api_key.refused entries: a client hammering from a wrong
// address costs one audit write a minute per key and instance, not one per request.
const refusalEvery = time.Minute

// ErrAPIKeyRolled: the key was rolled (or revoked) already; roll its successor.
var ErrAPIKeyRolled = problem.Invalid("id", "the key was rolled or revoked already: roll the key that replaced it")

// KeyOptions are an API key's optional properties at creation.
type KeyOptions struct {
	// ExpiresAt, when set, is when the key stops working; it must be in the future.
	ExpiresAt *time.Time
	// AllowedCidrs, when not empty, are the only networks the key may be used from.
	AllowedCidrs []netip.Prefix
	// Mode is ModeLive (also for "") or ModeTest (docs/sandboxes.md).
	Mode Mode
}

// ParseCIDRs parses networks such as "203.0.113.0/24" or a single address
// ("2001:db8::1", taken as /32 or /128). Errors: VALIDATION_FAILED naming
// "allowedCidrs", one field error for each entry that is no network, so that a
// list with several typos is mended in one round.
func ParseCIDRs(in []string) ([]netip.Prefix, error) {
	if len(in) > MaxAllowedCidrs {
		return nil, problem.Invalid("allowedCidrs", fmt.Sprintf("at most %d networks", MaxAllowedCidrs))
	}
	out := make([]netip.Prefix, 0, len(in))
	var bad []problem.FieldError
	for _, s := range in {
		s = strings.TrimSpace(s)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				bad = append(bad, problem.FieldError{Field: "allowedCidrs",
					Detail: fmt.Sprintf("%q is not a network (203.0.113.0/24) or an address", s)})
				continue
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	if p := problem.Fields(bad); p != nil {
		return nil, p
	}
	return out, nil
}

// CreateAPIKeyWith is CreateAPIKey with an expiry and allowed networks.
// Errors: as CreateAPIKey's; VALIDATION_FAILED naming "expiresAt" for a time not
// in the future.
func (s *Service) CreateAPIKeyWith(ctx context.Context, tenantID, name string, scopes []Scope, o KeyOptions) (APIKey, string, error) {
	at, err := s.futureExpiry("expiresAt", o.ExpiresAt)
	if err != nil {
		return APIKey{}, "", err
	}
	o.ExpiresAt = at
	return s.createAPIKey(ctx, tenantID, name, scopes, o)
}

// futureExpiry is a key's expiry as stored (UTC, to the microsecond), nil for
// none. Errors: VALIDATION_FAILED naming field for a time not in the future.
func (s *Service) futureExpiry(field string, at *time.Time) (*time.Time, error) {
	if at == nil {
		return nil, nil
	}
	t := at.UTC().Truncate(time.Microsecond)
	if !t.After(s.timestamp()) {
		return nil, problem.Invalid(field, "must be in the future")
	}
	return &t, nil
}

// RollAPIKey replaces the tenant's key id with a new one of the same name, scopes
// allowed networks and mode, and returns the new key with
// its secret and the old key as it is now: its secret keeps working until now +
// overlap (or its own expiry, if sooner), then gets 401 API_KEY_EXPIRED. The new
// key expires at expiresAt, or never when it is nil (docs/roles-and-credentials.md).
// Errors: ErrAPIKeyNotFound (also for another tenant's key);
// ErrAPIKeyRolled for a key rolled, revoked or expired already; VALIDATION_FAILED
// naming "expiresIn" for an overlap outside 0–MaxRollOverlap, or "newKeyExpiresAt"
// for a time not in the future.
func (s *Service) RollAPIKey(ctx context.Context, tenantID, id string, overlap time.Duration, expiresAt *time.Time) (next APIKey, secret string, old APIKey, err error) {
	if overlap < 0 || overlap > MaxRollOverlap {
		return APIKey{}, "", APIKey{}, problem.Invalid("expiresIn", "must be 0–604800 seconds")
	}
	if expiresAt, err = s.futureExpiry("newKeyExpiresAt", expiresAt); err != nil {
		return APIKey{}, "", APIKey{}, err
	}
	old, err = s.store.APIKeyByID(ctx, id)
	if err != nil {
		return APIKey{}, "", APIKey{}, err
	}
	now := s.timestamp()
	if old.TenantID != tenantID {
		return APIKey{}, "", APIKey{}, ErrAPIKeyNotFound
	}
	if old.RevokedAt != nil || old.RolledTo != "" || old.Expired(now) {
		return APIKey{}, "", APIKey{}, ErrAPIKeyRolled
	}
	next, secret, err = s.newAPIKey(ctx, tenantID, old.Name, old.Scopes, KeyOptions{ExpiresAt: expiresAt, AllowedCidrs: old.AllowedCidrs, Mode: old.Mode})
	if err != nil {
		return APIKey{}, "", APIKey{}, err
	}
	ends := now.Add(overlap)
	if old.ExpiresAt != nil && old.ExpiresAt.Before(ends) {
		ends = *old.ExpiresAt
	}
	if err := s.store.RollAPIKey(ctx, old, ends, next, hashSecret(secret)); err != nil {
		return APIKey{}, "", APIKey{}, err
	}
	old.ExpiresAt, old.RolledTo = &ends, next.ID
	return next, secret, old, nil
}

// CheckAddress refuses k used from addr when it is outside k's allowedCidrs: 403
// IP_NOT_ALLOWED, recorded as api_key.refused at most once a minute per key and
// process, off the request's path. An allowed use is recorded as the key's
// lastUsedAt (touch); a refused one is not.
func (s *Service) CheckAddress(ctx context.Context, k APIKey, addr string) error {
	if k.Allows(addr) {
		s.touch(ctx, k.ID)
		return nil
	}
	if s.throttle("refused:"+k.ID, refusalEvery) {
		s.background(ctx, func(ctx context.Context) error {
			return s.store.RecordAPIKeyRefused(changes.WithActor(ctx, keyActor(k)), k)
		})
	}
	return problem.New(problem.IPNotAllowed, "this API key may not be used from %s (its allowedCidrs)", addr)
}

// RecordExpiredKeys records api_key.expired (actor system) for up to limit keys
// that expired without a request noticing it, and returns how many: the audit log
// names every expiry, used or not.
func (s *Service) RecordExpiredKeys(ctx context.Context, limit int) (int, error) {
	ks, err := s.store.ExpiredAPIKeys(ctx, s.timestamp(), limit)
	if err != nil {
		return 0, err
	}
	for i, k := range ks {
		if err := s.store.RecordAPIKeyExpired(ctx, k, *k.ExpiresAt); err != nil {
			return i, err
		}
	}
	return len(ks), nil
}

// expired answers a request with k, whose expiry has passed: ErrAPIKeyExpired, and
// its api_key.expired entry (actor: the key) written once, off the request's path.
func (s *Service) expired(ctx context.Context, k APIKey) error {
	if !k.ExpiryRecorded && s.throttle("expired:"+k.ID, refusalEvery) {
		s.background(ctx, func(ctx context.Context) error {
			return s.store.RecordAPIKeyExpired(changes.WithActor(ctx, keyActor(k)), k, *k.ExpiresAt)
		})
	}
	return ErrAPIKeyExpired
}

// keyActor is k as the author of the records of its own refusals.
func keyActor(k APIKey) changes.Actor { return changes.Actor{Type: changes.ActorAPIKey, ID: k.ID} }

// throttle reports whether the bookkeeping named key is due (not done within
// every by this process), and notes it done now if so.
func (s *Service) throttle(key string, every time.Duration) bool {
	now := s.timestamp()
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, seen := s.lastSeen[key]; seen && now.Sub(last) < every {
		return false
	}
	s.lastSeen[key] = now
	return true
}

// background runs write off the request's path, best effort (bookkeeping must
// neither fail nor slow a request), with ctx's values but not its end; Wait waits
// for it.
func (s *Service) background(ctx context.Context, write func(ctx context.Context) error) {
	s.touches.Add(1)
	go func() {
		defer s.touches.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := write(ctx); err != nil && !errors.Is(err, context.Canceled) {
			slog.ErrorContext(ctx, "api key bookkeeping failed", slog.String("error", err.Error()))
		}
	}()
}
