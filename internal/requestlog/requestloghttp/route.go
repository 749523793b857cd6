package requestloghttp

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
)

// KeyPeeker reads an idempotency key's record and whether a request holds the key,
// without taking or waiting for its lock (gormstore.Store.Peek).
type KeyPeeker interface {
	Peek(ctx context.Context, k idempotency.RecordKey) (rec *idempotency.Record, locked bool, err error)
}

// RoutesConfig wires the routes.
type RoutesConfig struct {
	// Store holds the entries. Required.
	Store requestlog.Store
	// Keys answers the key inspector. Required.
	Keys KeyPeeker
	// Now is the clock that decides whether a record is still live. Optional.
	// Default time.Now.
	Now func() time.Time
}

type handlers struct {
	store requestlog.Store
	keys  KeyPeeker
	now   func() time.Time
}

// Routes declares the request log's routes, under /v1 and /v2, reads that need
// requests:read.
func Routes(cfg RoutesConfig) []route.Route {
	h := handlers{store: cfg.Store, keys: cfg.Keys, now: cfg.Now}
	if h.now == nil {
		h.now = time.Now
	}
	read := tenants.ScopeRequestsRead
	return []route.Route{
		{Method: http.MethodGet, Path: "/requests", Handler: h.list, Versions: route.Both, Scope: read},
		{Method: http.MethodGet, Path: "/requests/:id", Handler: h.get, Versions: route.Both, Scope: read},
		{Method: http.MethodGet, Path: "/idempotency-keys/:key", Handler: h.inspect, Versions: route.Both, Scope: read},
	}
}

func (h handlers) list(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	p, err := route.PagingOf(c, ids.RequestLog)
	if err != nil {
		return err
	}
	f, err := filterOf(c)
	if err != nil {
		return err
	}
	// Newest first: the page after the cursor holds older entries.
	f.Limit, f.Before = p.Limit, p.After
	es, more, err := h.store.List(c.Request().Context(), tenant, f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(es, more, entryID, toResponse))
}

// requestIDShape is what the server keeps as a request id (internal/requestid).
var requestIDShape = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

func (h handlers) get(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	if !requestIDShape.MatchString(id) {
		return requestlog.ErrNotFound
	}
	e, err := h.store.Get(c.Request().Context(), tenant, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toResponse(e))
}

// inspect answers what became of an idempotency key: processing while a request
// holds it, complete or failed once settled, 404 when neither the tenant nor the
// caller has a live record. A route whose records are the caller's own
// (route.Route.PerPrincipal) keeps them under the caller's credential: only its
// caller finds them.
func (h handlers) inspect(c echo.Context) error {
	p, err := route.Principal(c)
	if err != nil {
		return err
	}
	k, err := keyOf(c)
	if err != nil {
		return err
	}
	var rec *idempotency.Record
	var locked bool
	for _, scope := range []string{p.Scope, p.CredentialID} {
		k.Scope = scope
		if rec, locked, err = h.keys.Peek(c.Request().Context(), k); err != nil || rec != nil || locked {
			break
		}
	}
	if err != nil {
		return err
	}
	state, ok := stateOf(rec, locked, h.now())
	if !ok {
		return requestlog.ErrKeyNotFound
	}
	return c.JSON(http.StatusOK, toKeyResponse(k, state, rec, p.Livemode))
}

// Key states the inspector shows (docs/requests.md).
const (
	stateProcessing = "processing"
	stateComplete   = "complete"
	stateFailed     = "failed"
)

// stateOf is what a client should take a key's state to be. A live COMPLETE record
// wins over a held lock, as in the engine: a request would be answered from it. A
// key that is free and has no live record is absent (false).
func stateOf(rec *idempotency.Record, locked bool, now time.Time) (string, bool) {
	live := rec != nil && rec.Live(now)
	switch {
	case live && rec.State == idempotency.StateComplete:
		return stateComplete, true
	case locked:
		return stateProcessing, true
	case live && rec.State == idempotency.StateFailed:
		return stateFailed, true
	}
	return "", false
}

// keyOf reads the key, ?method and ?path of an inspector request. Errors: 404 for a
// key no request could have used; 400 VALIDATION_FAILED naming method or path.
func keyOf(c echo.Context) (idempotency.RecordKey, error) {
	k := idempotency.RecordKey{Key: c.Param("key"), Method: strings.ToUpper(c.QueryParam("method")), Path: c.QueryParam("path")}
	if !idempotency.ValidKey(k.Key) {
		return k, requestlog.ErrKeyNotFound
	}
	switch k.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	case "":
		return k, problem.Invalid("method", "is required: the write's method, POST, PUT, PATCH or DELETE")
	default:
		return k, problem.Invalid("method", "must be the write's method: POST, PUT, PATCH or DELETE")
	}
	if k.Path == "" {
		return k, problem.Invalid("path", "is required: the write's path, such as /v2/risks")
	}
	if !strings.HasPrefix(k.Path, "/") || len(k.Path) > requestlog.MaxPathLength {
		return k, problem.Invalid("path", "must be the write's path, such as /v2/risks")
	}
	return k, nil
}

// outcomes are the values ?outcome accepts (docs/requests.md).
var outcomes = []requestlog.Outcome{requestlog.OutcomeExecuted, requestlog.OutcomeReplayed,
	requestlog.OutcomeInProgress, requestlog.OutcomeKeyReused, requestlog.OutcomeFailed,
	requestlog.OutcomeStoreUnavailable}

// filterOf reads the list's filters. Errors: 400 VALIDATION_FAILED naming each
// offending parameter.
func filterOf(c echo.Context) (requestlog.Filter, error) {
	var f requestlog.Filter
	var errs []problem.FieldError
	bad := func(field, detail string) { errs = append(errs, problem.FieldError{Field: field, Detail: detail}) }
	if s := c.QueryParam("idempotencyKey"); s != "" {
		if !idempotency.ValidKey(s) {
			bad("idempotencyKey", "must be 8 to 128 characters from A-Z a-z 0-9 . _ -")
		}
		f.IdempotencyKey = s
	}
	if s := c.QueryParam("status"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			bad("status", "must be an HTTP status code from 100 to 599")
		}
		f.Status = n
	}
	if s := c.QueryParam("method"); s != "" {
		f.Method = strings.ToUpper(s)
		switch f.Method {
		case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		default:
			bad("method", "must be GET, POST, PUT, PATCH or DELETE")
		}
	}
	if s := c.QueryParam("apiVersion"); s != "" {
		if _, err := apiversion.API.Parse(s); err != nil {
			bad("apiVersion", "must be an API version of docs/api-versions.md")
		}
		f.APIVersion = s
	}
	if s := c.QueryParam("outcome"); s != "" {
		f.Outcome = requestlog.Outcome(s)
		if !slices.Contains(outcomes, f.Outcome) {
			bad("outcome", "must be executed, replayed, in_progress, key_reused, failed or store_unavailable")
		}
	}
	for _, tb := range []struct {
		name string
		into *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if s := c.QueryParam(tb.name); s != "" {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				bad(tb.name, "must be an RFC 3339 timestamp such as 2026-12-01T08:00:00Z")
			}
			*tb.into = t
		}
	}
	if p := problem.Fields(errs); p != nil {
		return f, p
	}
	return f, nil
}
