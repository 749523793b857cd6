package tenants

import (
	"context"
	"time"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/problem"
)

// RollbackWindow is how long after a move of its pin a tenant may move back to the
// version the move replaced (docs/api-versions.md).
const RollbackWindow = 72 * time.Hour

// MoveAPIVersion moves the tenant's pin to version, among versions (oldest first):
// forward to any newer version, or back to the version the last move replaced
// within RollbackWindow of that move, once. The pin it names already is no move.
// Errors: API_VERSION_UNKNOWN for an unknown version; API_VERSION_MOVE_REFUSED for
// any other move back; ErrTenantNotFound.
func (s *Service) MoveAPIVersion(ctx context.Context, versions *apiversion.Set, tenantID, version string) (Tenant, error) {
	to, err := versions.Parse(version)
	if err != nil {
		return Tenant{}, problem.New(problem.APIVersionUnknown, "version: no API version is named %q", version)
	}
	var out Tenant
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.LockTenant(ctx, tenantID); err != nil {
			return err
		}
		t, err := s.store.Tenant(ctx, tenantID)
		if err != nil {
			return err
		}
		from := apiversion.Version(t.APIVersion)
		out = t
		if to == from {
			return nil
		}
		now := s.timestamp()
		after := t
		after.APIVersion, after.APIVersionMovedAt = string(to), &now
		if to > from {
			replaced := string(from)
			after.APIVersionReplaced = &replaced
		} else {
			if t.APIVersionReplaced == nil || *t.APIVersionReplaced != string(to) {
				return problem.New(problem.APIVersionMoveRefused, "version: the pin may move back only to the version its last move replaced, once")
			}
			if t.APIVersionMovedAt == nil || !now.Before(t.APIVersionMovedAt.Add(RollbackWindow)) {
				return problem.New(problem.APIVersionMoveRefused, "version: the pin may move back only within 72 hours of its move")
			}
			after.APIVersionReplaced = nil
		}
		if err := s.store.SetAPIVersion(ctx, t, after); err != nil {
			return err
		}
		out = after
		return nil
	})
	return out, err
}

// Now is the service's clock, for what is shown of a pin's rollback window.
func (s *Service) Now() time.Time { return s.now() }
