package upload

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/logfield"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// Rule says how a route accepts one form name.
type Rule struct {
	// File: parts of this name must be files (carry a filename); otherwise they must
	// be plain fields.
	File bool
	// Max is how many parts of this name may be sent. Optional. Default 1.
	Max int
}

// Config configures the spooling middleware, in the shape of Echo's own.
type Config struct {
	// Skipper defines a function to skip the middleware: a skipped route has no spool,
	// and FormOf fails on it. Optional. Default middleware.DefaultSkipper.
	Skipper middleware.Skipper
	// Dir is where temporary files go; it is created (0700) on first use. It must be
	// on the file system where handlers move files to (File.MoveTo renames). Required.
	Dir string
	// Rules lists the form names the routes accept; any other name is refused with 400
	// VALIDATION_FAILED naming it, before its bytes are stored. Optional. Default: any
	// name, any number of times.
	Rules map[string]Rule
	// MaxFieldBytes bounds each plain field's value. Optional. Default 64 KiB.
	MaxFieldBytes int64
	// MaxParts bounds the number of parts. Optional. Default 32.
	MaxParts int
	// Logger logs one line per spooled form (sizes and timing, never contents) and
	// cleanup failures. Optional. Default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig holds the defaults ToMiddleware fills in for zero fields.
var DefaultConfig = Config{
	Skipper:       middleware.DefaultSkipper,
	MaxFieldBytes: 64 << 10,
	MaxParts:      32,
}

// ToMiddleware validates config, fills defaults and returns the middleware. It puts
// an empty spool in the request context, runs the rest of the chain, and then removes
// every temporary file the request spooled and did not move into place — whatever the
// outcome: success, error, replay or panic. The body is not read here: the first
// FormOf or HashBody reads it. Errors: Dir is empty.
func (config Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.Dir == "" {
		return nil, errors.New("upload: Dir is required")
	}
	if config.Skipper == nil {
		config.Skipper = DefaultConfig.Skipper
	}
	if config.MaxFieldBytes <= 0 {
		config.MaxFieldBytes = DefaultConfig.MaxFieldBytes
	}
	if config.MaxParts <= 0 {
		config.MaxParts = DefaultConfig.MaxParts
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	cfg := &config
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.Skipper(c) {
				return next(c)
			}
			s := &spool{cfg: cfg}
			req := c.Request()
			c.SetRequest(req.WithContext(context.WithValue(req.Context(), spoolKey{}, s)))
			defer s.cleanup()
			return next(c)
		}
	}, nil
}

type spoolKey struct{}

func spoolOf(c echo.Context) *spool {
	s, _ := c.Request().Context().Value(spoolKey{}).(*spool)
	return s
}

// FormOf returns the request's multipart form, reading and spooling the body on the
// first call and returning the same form (or error) on every later one, so the
// fingerprint and the handler share one pass.
//
// Errors: *problem.Problem VALIDATION_FAILED (not multipart/form-data, malformed or
// truncated, a name the rules refuse — naming it —, an overlong field, too many parts),
// PAYLOAD_TOO_LARGE (past the route's body limit); a plain error when the spool's file
// system fails or the route has no spooling middleware.
func FormOf(c echo.Context) (*Form, error) {
	s := spoolOf(c)
	if s == nil {
		return nil, errors.New("upload: FormOf on a route without the spooling middleware")
	}
	if s.done {
		return s.form, s.err
	}
	start := time.Now()
	form, err := s.read(c.Request())
	if err == nil {
		s.cfg.Logger.LogAttrs(c.Request().Context(), slog.LevelInfo, "upload spooled",
			slog.Int("parts", len(form.Parts)), slog.Int64("bytes", form.Size()),
			logfield.Duration(time.Since(start)))
	}
	return form, err
}

// HashBody is the multipart/form-data body hasher of the idempotency fingerprint
// (an idempotency.BodyHasherFunc): it reads the form and writes its canonical
// encoding (Form.WriteCanonical) to w. File bytes are hashed as they stream, never
// held in memory. With idempotency.HashKeep the form is spooled through FormOf, for
// the handler; with idempotency.HashDiscard its files are hashed and dropped — no
// temporary file is created, nothing is written to disk — under the same rules and
// into the same encoding, so both modes give one body the same fingerprint, and
// FormOf then fails (the body is gone).
//
// On a route without the spooling middleware — a multipart body sent where no upload
// is expected — it hashes the raw body bytes instead (read once through reqbody,
// bounded by the route's body limit, and left there for the handler): such a
// fingerprint depends on the boundary, which can only turn a retry into a 422, never
// replay a different request.
//
// Errors: as FormOf.
func HashBody(c echo.Context, w io.Writer, mode idempotency.HashMode) error {
	s := spoolOf(c)
	if s == nil {
		return hashRaw(c.Request(), w)
	}
	var form *Form
	var err error
	if mode == idempotency.HashDiscard {
		form, err = s.discard(c.Request())
	} else {
		form, err = FormOf(c)
	}
	if err != nil {
		return err
	}
	io.WriteString(w, "form\n")
	return form.WriteCanonical(w)
}

func hashRaw(req *http.Request, w io.Writer) error {
	body, err := reqbody.Read(req, 0)
	if err != nil {
		return err
	}
	io.WriteString(w, "raw\n")
	_, err = w.Write(body)
	return err
}
