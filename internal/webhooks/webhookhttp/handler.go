// Package webhookhttp is the HTTP adapter of inbound webhooks: POST
// /webhooks/inbound/{source}. The caller is authenticated by the delivery's signature,
// not by a credential, and deduplicated by the sender's event ID, not by
// Idempotency-Key (its route declares the header unsupported, so it is refused).
package webhookhttp

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// DefaultMaxBodyBytes is Config.MaxBodyBytes when zero.
const DefaultMaxBodyBytes = 1 << 20

// Config wires the handler.
type Config struct {
	// Service verifies and processes deliveries. Required.
	Service *webhooks.Service
	// MaxBodyBytes bounds a delivery; larger ones get 413 PAYLOAD_TOO_LARGE. Optional.
	// Default 1 MiB.
	MaxBodyBytes int64
	// Now is the clock the signature's timestamp is checked against. Optional.
	// Default time.Now.
	Now func() time.Time
	// Logger logs one line per delivery (source, event ID, type, duplicate; never the
	// body or the signature). Optional. Default slog.Default().
	Logger *slog.Logger
}

// Routes declares POST /webhooks/inbound/:source: unauthenticated (the signature
// authenticates), Idempotency-Key refused with 422 IDEMPOTENCY_UNSUPPORTED_ROUTE
// before the body is read (docs/uploads-and-webhooks.md), a raw body of at most
// cfg.MaxBodyBytes, since the signature covers the exact bytes.
func Routes(cfg Config) []route.Route {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return []route.Route{{Method: http.MethodPost, Path: "/webhooks/inbound/:source", Handler: Handler(cfg),
		Versions: route.Unauthenticated, Idempotency: idempotency.Unsupported,
		Body: route.Body{Kind: route.RawBody, Limit: cfg.MaxBodyBytes}}}
}

// Handler returns the handler of POST /webhooks/inbound/:source. It answers 200
// {"received":true,"duplicate":bool}; 401 UNAUTHENTICATED for an unknown source; 400
// VALIDATION_FAILED for a missing, wrong or stale signature and for an invalid
// delivery or a body that ended early; 404 NOT_FOUND for finding.updated about an
// unknown externalId; 413 PAYLOAD_TOO_LARGE past MaxBodyBytes.
func Handler(cfg Config) echo.HandlerFunc {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		src, err := cfg.Service.Source(ctx, c.Param("source"))
		if errors.Is(err, webhooks.ErrSourceNotFound) {
			// Every 401 names how to authenticate (RFC 9110 section 11.6.1): here, a
			// signature by the source's secret (docs/uploads-and-webhooks.md).
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Webhook-Signature realm="riskapi"`)
			return problem.New(problem.Unauthenticated, "no webhook source of that name; create one with `api webhook create`")
		}
		if err != nil {
			return err
		}
		body, err := reqbody.Read(c.Request(), cfg.MaxBodyBytes)
		if err != nil {
			return err
		}
		// Nothing of the body is looked at before its signature holds.
		if err := webhooks.VerifySignature(src.Secret, c.Request().Header.Get(webhooks.SignatureHeader), body, cfg.Now()); err != nil {
			return err
		}
		var req deliveryRequest
		if err := jsonbody.Unmarshal(body, &req); err != nil {
			return err
		}
		ev, err := req.event()
		if err != nil {
			return err
		}
		if err := ev.Validate(); err != nil {
			return err // the envelope's fields, named as sent; inData is for the risk's
		}
		dup, err := cfg.Service.Receive(ctx, src, ev)
		if err != nil {
			return inData(err) // not-found sentinels pass through to the edge's table
		}
		cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "webhook received",
			slog.String("source", src.Name), slog.String("eventId", ev.ID),
			slog.String("type", string(ev.Type)), slog.Bool("duplicate", dup))
		return c.JSON(http.StatusOK, ack{Received: true, Duplicate: dup})
	}
}

// inData names the fields of the risk domain's validation errors as members of the
// delivery's "data" object ("data/title"), the way jsonbody names nested members.
func inData(err error) error {
	p := problem.As(err)
	if p == nil || p.Code != problem.ValidationFailed || len(p.Errors) == 0 {
		return err
	}
	errs := make([]problem.FieldError, len(p.Errors))
	for i, f := range p.Errors {
		errs[i] = problem.FieldError{Field: "data/" + f.Field, Detail: f.Detail}
	}
	return problem.Fields(errs)
}
