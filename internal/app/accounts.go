package app

import (
	"context"

	"github.com/riskapi/riskapi/internal/auth/authstore"
	"github.com/riskapi/riskapi/internal/tenants"
)

// ResetPassword gives the user id a new random password, ends every session of the
// user in the same transaction, and returns the user and the password (shown once;
// only its hash is stored). Errors: tenants.ErrUserNotFound.
func (a *Admin) ResetPassword(ctx context.Context, id string) (tenants.User, string, error) {
	sessions := authstore.New(a.DB.DB)
	return a.Tenants.ResetPassword(ctx, id, func(ctx context.Context) error {
		return sessions.RevokeUserSessions(ctx, id, "", a.now().UTC())
	})
}
