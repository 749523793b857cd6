package apitest

import (
	"context"
	"log/slog"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/riskapi/riskapi/internal/app"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/tenants"
)

// User is a user made by Env.User, signed in once.
type User struct {
	ID, Email, Password string
	// Token is a session token from signing in.
	Token string
}

// User adds a user with role to tenantID and signs them in.
func (e *Env) User(tenantID string, role tenants.Role) *User {
	e.T.Helper()
	email := strings.ToLower(string(role)) + "-" + ids.New(ids.User)[20:] + "@example.com"
	u, err := e.App.Tenants.CreateUser(context.Background(), tenantID, email, "correct horse battery", role)
	if err != nil {
		e.T.Fatalf("create user: %v", err)
	}
	return &User{ID: u.ID, Email: email, Password: "correct horse battery",
		Token: LoginAs(e.T, e, email, "correct horse battery").Token}
}

// Twin starts a second riskapi on e's database and clock, as a second instance
// behind a load balancer would be: its own pool, services and caches; its
// configuration is e's, modified by each of mods.
func (e *Env) Twin(mods ...func(*config.Config)) *Env {
	e.T.Helper()
	logs := &syncBuffer{}
	cfg := e.App.Config
	for _, m := range mods {
		m(&cfg)
	}
	a, err := app.Open(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)),
		app.Options{BcryptCost: bcrypt.MinCost, Now: e.Clock.Now})
	if err != nil {
		e.T.Fatalf("open second app: %v", err)
	}
	e.T.Cleanup(func() { a.Close() })
	return &Env{T: e.T, App: a, Clock: e.Clock, Logs: &logs.buf}
}
