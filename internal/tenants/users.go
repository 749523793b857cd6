package tenants

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
)

// checkPassword is the one password rule: 8–72 characters (what the spec's
// minLength/maxLength count, docs/openapi.yaml), and at most 72 bytes in UTF-8,
// bcrypt's limit, which only a password of non-ASCII characters can reach first.
func checkPassword(field, password string) error {
	n := utf8.RuneCountInString(password)
	if n < 8 || n > 72 || len(password) > 72 {
		return problem.Invalid(field, "must be 8–72 characters and at most 72 bytes in UTF-8")
	}
	return nil
}

// CreateUser adds a user with role to tenantID. The email is normalised to lower
// case; the password is stored only as a bcrypt hash. Errors: ErrTenantNotFound,
// ErrEmailTaken, VALIDATION_FAILED naming "email", "password" or "role".
func (s *Service) CreateUser(ctx context.Context, tenantID, email, password string, role Role) (User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return User{}, problem.Invalid("email", "must be an email address")
	}
	if err := checkPassword("password", password); err != nil {
		return User{}, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if _, err := s.store.Tenant(ctx, tenantID); err != nil {
		return User{}, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return User{}, fmt.Errorf("hash password: %w", err)
	}
	u := User{ID: ids.New(ids.User), TenantID: tenantID, Email: email, Role: role, CreatedAt: s.timestamp()}
	if err := s.store.CreateUser(ctx, u, string(hash)); err != nil {
		return User{}, err
	}
	return u, nil
}

// User returns the tenant's user with id. Errors: ErrUserNotFound (also for another
// tenant's user).
func (s *Service) User(ctx context.Context, tenantID, id string) (User, error) {
	u, _, err := s.store.UserByID(ctx, id)
	if err == nil && u.TenantID != tenantID {
		err = ErrUserNotFound
	}
	return u, err
}

// UserByID returns the user with id whatever its tenant: the operator's commands.
// Errors: ErrUserNotFound.
func (s *Service) UserByID(ctx context.Context, id string) (User, error) {
	u, _, err := s.store.UserByID(ctx, id)
	return u, err
}

// Users lists the tenant's users newest first.
func (s *Service) Users(ctx context.Context, tenantID string, p Page) ([]User, bool, error) {
	return s.store.Users(ctx, tenantID, p)
}

// SetRole changes the role of the tenant's user id. The tenant's last admin cannot
// be demoted. Errors: ErrUserNotFound, VALIDATION_FAILED naming "role".
func (s *Service) SetRole(ctx context.Context, tenantID, id string, role Role) (User, error) {
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	var u User
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		if u, err = s.lockedUser(ctx, tenantID, id); err != nil {
			return err
		}
		if u.Role == RoleAdmin && role != RoleAdmin {
			if err := s.notLastAdmin(ctx, tenantID, "role", u.ID); err != nil {
				return err
			}
		}
		before := u
		u.Role = role
		return s.store.SetUserRole(ctx, before, role)
	})
	return u, err
}

// DeleteUser removes the tenant's user id; then, in the same transaction, it runs
// also (may be nil), where the caller ends the user's sessions. The tenant's last
// admin cannot be removed. Errors: ErrUserNotFound, VALIDATION_FAILED naming "id".
func (s *Service) DeleteUser(ctx context.Context, tenantID, id string, also func(ctx context.Context) error) error {
	return s.store.InTx(ctx, func(ctx context.Context) error {
		u, err := s.lockedUser(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if u.Role == RoleAdmin {
			if err := s.notLastAdmin(ctx, tenantID, "id", u.ID); err != nil {
				return err
			}
		}
		if err := s.store.DeleteUser(ctx, u); err != nil {
			return err
		}
		if s.UserDeleted != nil {
			if err := s.UserDeleted(ctx, u); err != nil {
				return err
			}
		}
		if also != nil {
			return also(ctx)
		}
		return nil
	})
}

// lockedUser locks the tenant (see Store.LockTenant) and returns its user id.
func (s *Service) lockedUser(ctx context.Context, tenantID, id string) (User, error) {
	if err := s.store.LockTenant(ctx, tenantID); err != nil {
		return User{}, err
	}
	return s.User(ctx, tenantID, id)
}

// notLastAdmin refuses, naming field, to take the admin role from userID when it is
// the tenant's only admin: a tenant must keep someone who can manage it.
func (s *Service) notLastAdmin(ctx context.Context, tenantID, field, userID string) error {
	n, err := s.store.CountAdmins(ctx, tenantID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return problem.Invalid(field, userID+" is the tenant's last admin; make another user admin first")
	}
	return nil
}

// ErrWrongPassword is wrapped in ChangePassword's VALIDATION_FAILED when the current
// password is wrong, so that the caller can count the failure (docs/security.md).
var ErrWrongPassword = errors.New("wrong current password")

// ChangePassword replaces the password of the tenant's user id after checking the
// current one; then, in the same transaction, it runs also (may be nil), where the
// caller ends the user's other sessions. Errors: ErrUserNotFound,
// VALIDATION_FAILED naming "currentPassword" (wrong) or "newPassword".
func (s *Service) ChangePassword(ctx context.Context, tenantID, id, current, next string, also func(ctx context.Context) error) error {
	if err := checkPassword("newPassword", next); err != nil {
		return err
	}
	u, hash, err := s.store.UserByID(ctx, id)
	if err == nil && u.TenantID != tenantID {
		err = ErrUserNotFound
	}
	if err != nil {
		return err
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(current)) != nil {
		return fmt.Errorf("%w: %w", ErrWrongPassword, problem.Invalid("currentPassword", "is wrong"))
	}
	newHash, err := bcrypt.GenerateFromPassword([]byte(next), s.cost)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	return s.setPasswordHash(ctx, u, newHash, also)
}

// ResetPassword gives the user id, whatever its tenant (the operator's command, for
// a lost password), a new random password and returns the user and the password,
// which is not stored; in the same transaction it runs also (may be nil), where the
// caller ends the user's sessions. Errors: ErrUserNotFound.
func (s *Service) ResetPassword(ctx context.Context, id string, also func(ctx context.Context) error) (User, string, error) {
	u, _, err := s.store.UserByID(ctx, id)
	if err != nil {
		return User{}, "", err
	}
	password, err := NewPassword()
	if err != nil {
		return User{}, "", err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return User{}, "", fmt.Errorf("hash password: %w", err)
	}
	if err := s.setPasswordHash(ctx, u, hash, also); err != nil {
		return User{}, "", err
	}
	return u, password, nil
}

// setPasswordHash stores hash as u's password (recording user.password_changed)
// and runs also (may be nil) in the same transaction. Hashing stays outside it: it is the slow part, and SQLite
// has one writer.
func (s *Service) setPasswordHash(ctx context.Context, u User, hash []byte, also func(ctx context.Context) error) error {
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.SetPasswordHash(ctx, u, string(hash)); err != nil {
			return err
		}
		if also != nil {
			return also(ctx)
		}
		return nil
	})
}

// NewPassword returns a random password: 24 base64url characters (144 bits), well
// inside the 8–72 characters a password may have.
func NewPassword() (string, error) {
	var raw [18]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw[:]), nil
}

// UserByEmail returns the user whose sign-in name is email, whatever its tenant
// (emails are unique across tenants). Errors: ErrUserNotFound, also for a user
// of a disabled tenant.
func (s *Service) UserByEmail(ctx context.Context, email string) (User, error) {
	u, _, err := s.store.UserByEmail(ctx, strings.ToLower(strings.TrimSpace(email)))
	if errors.Is(err, ErrTenantDisabled) {
		return User{}, ErrUserNotFound
	}
	return u, err
}

// ActionOwner returns the email of id when it is a user of the tenant, or of the
// tenant whose sandbox tenantID is (an action's owner must be); ok false when it
// is neither.
func (s *Service) ActionOwner(ctx context.Context, tenantID, id string) (email string, ok bool, err error) {
	// A sandbox's actions are owned by the account's users (docs/sandboxes.md).
	u, err := s.User(ctx, ids.AccountOf(tenantID), id)
	if errors.Is(err, ErrUserNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return u.Email, true, nil
}
