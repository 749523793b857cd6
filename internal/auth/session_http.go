package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
	"github.com/riskapi/riskapi/internal/tenants"
)

// CookieName is the session cookie (docs/openapi.yaml, POST /v1/sessions).
const CookieName = "session"

// AuthorHeader names the user a queued change was made by (their id, "usr_…"). The
// dashboard sends it with every change it queued, so the server itself keeps the
// promise that a change is sent only under its author (docs/dashboard.md): the
// cookie may have changed under the tab (another sign-in on the same origin).
const AuthorHeader = "Riskapi-Author"

// ModeHeader says which data a session's request reaches: "test" for the tenant's
// sandbox, "live" (or no header) for live data (docs/sandboxes.md). The dashboard
// sends it with every request while its Test data switch is on, and with each
// queued change the mode it was made in. A custom header: a cross-site form cannot
// send it, and a cross-origin script's request with it needs a CORS preflight,
// which riskapi never grants; cookie writes still pass the cross-origin check.
// API keys carry their own mode and ignore it.
const ModeHeader = "Riskapi-Mode"

// SessionAuth authenticates /v1 requests by "Authorization: Bearer <jwt>" or the
// session cookie. A write authenticated by the cookie alone must pass Go's
// cross-origin protection (Sec-Fetch-Site / Origin checks), or it is refused with
// 403 FORBIDDEN: a browser cannot be tricked into sending a bearer header, but it
// sends cookies cross-site. A request naming its author (AuthorHeader) is 401
// UNAUTHENTICATED unless the session is that user's. ModeHeader picks the data
// scope: a value other than live or test, or two headers, is 400 VALIDATION_FAILED.
func SessionAuth(s *Sessions) echo.MiddlewareFunc {
	csrf := http.NewCrossOriginProtection()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			token, ok := bearer(c)
			if !ok {
				ck, err := c.Cookie(CookieName)
				if err != nil || ck.Value == "" {
					return challenge(c, "sign in at POST /v1/sessions and send the token as Authorization: Bearer or the session cookie")
				}
				if err := csrf.Check(c.Request()); err != nil {
					return problem.New(problem.Forbidden, "cross-site request refused: send the token in the Authorization header")
				}
				token = ck.Value
			}
			if strings.HasPrefix(token, tenants.APIKeyPrefix) { // a user who followed the wrong half of the docs
				return challenge(c, "this is an API key: API keys authenticate /v2 routes; /v1 takes a dashboard session (POST /v1/sessions)")
			}
			p, err := s.Verify(c.Request().Context(), token)
			if errors.Is(err, ErrInvalidSession) {
				return challenge(c, "the session token is invalid, expired or logged out")
			}
			if err != nil {
				return err
			}
			// 401, not 403: for this change its author is signed out, so it waits for
			// them (nothing ran and no idempotency record holds its key).
			if author := c.Request().Header.Get(AuthorHeader); author != "" && author != p.CredentialID {
				return challenge(c, "this change was made by another user ("+AuthorHeader+"): sign in as them to send it")
			}
			if named := c.Request().Header.Values(ModeHeader); len(named) > 1 {
				// As for Riskapi-Version: which one was meant is the client's to say.
				return problem.Invalid(ModeHeader, fmt.Sprintf("%d headers name modes; send one", len(named)))
			}
			mode, err := tenants.ParseMode(ModeHeader, c.Request().Header.Get(ModeHeader))
			if err != nil {
				return err
			}
			setPrincipal(c, p.inMode(mode))
			return next(c)
		}
	}
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

type loginResponse struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// LoginHandler serves POST /v1/sessions: {"email","password"} → 201
// {"token","expiresAt"} and an HttpOnly, SameSite=Lax cookie "session". Only a JSON
// body is taken, and a browser's request from another origin is refused: a form
// posted from another site (which cannot send application/json without a CORS
// preflight) must not sign a browser into the sender's account (login CSRF).
// Errors: 400 VALIDATION_FAILED, 401 UNAUTHENTICATED (noted for the password
// throttle), 403 FORBIDDEN (another origin), 415 UNSUPPORTED_MEDIA_TYPE.
func LoginHandler(s *Sessions) echo.HandlerFunc {
	csrf := http.NewCrossOriginProtection()
	return func(c echo.Context) error {
		if mt, _ := reqbody.MediaType(c.Request()); mt != echo.MIMEApplicationJSON {
			return problem.New(problem.UnsupportedMediaType, "sign in with Content-Type: application/json")
		}
		if err := csrf.Check(c.Request()); err != nil {
			return problem.New(problem.Forbidden, "cross-origin sign-in refused")
		}
		var req loginRequest
		// jsonbody, like every other JSON route: errors name the field, and a body
		// over the limit is 413 rather than "invalid JSON".
		if err := jsonbody.DecodeRequest(c.Request(), &req); err != nil {
			return err
		}
		var missing []problem.FieldError
		if req.Email == "" {
			missing = append(missing, problem.FieldError{Field: "email", Detail: "is required"})
		}
		if req.Password == "" {
			missing = append(missing, problem.FieldError{Field: "password", Detail: "is required"})
		}
		if p := problem.Fields(missing); p != nil {
			return p
		}
		token, exp, err := s.Login(c.Request().Context(), req.Email, req.Password)
		if errors.Is(err, tenants.ErrInvalidCredentials) {
			NotePasswordRejected(c)
			return challenge(c, "email or password is wrong")
		}
		if errors.Is(err, tenants.ErrTenantDisabled) {
			// The right password: not counted towards the lockout (docs/security.md).
			return challenge(c, "this account's tenant is disabled; its operator can enable it again")
		}
		if err != nil {
			return err
		}
		c.SetCookie(&http.Cookie{
			Name: CookieName, Value: token, Path: "/v1", Expires: exp,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.Scheme() == "https",
		})
		return c.JSON(http.StatusCreated, loginResponse{Token: token, ExpiresAt: exp})
	}
}

// LogoutHandler serves DELETE /v1/sessions (behind SessionAuth): the token stops
// working and the cookie is cleared; 204.
func LogoutHandler(s *Sessions) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := FromContext(c.Request().Context())
		if p == nil || p.SessionID == "" {
			return challenge(c, "no session")
		}
		if err := s.Logout(c.Request().Context(), p.SessionID); err != nil {
			return err
		}
		c.SetCookie(&http.Cookie{Name: CookieName, Value: "", Path: "/v1", MaxAge: -1,
			HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return c.NoContent(http.StatusNoContent)
	}
}
