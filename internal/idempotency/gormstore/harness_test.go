package gormstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/idempotency/gormstore"
	"github.com/riskapi/riskapi/internal/problem"
)

// harness serves a resource that knows nothing of risks — widgets — behind the
// idempotency middleware on a real database, and counts handler executions.
type harness struct {
	t     *testing.T
	db    *database.DB
	store *gormstore.Store
	e     *echo.Echo
	clock *apitest.StoppedClock
	ran   atomic.Int64
	// gate, when set, is waited on by the widget handler after its insert.
	gate chan struct{}
}

func newHarness(t *testing.T, mod func(*idempotency.Config)) *harness {
	t.Helper()
	db := dbtest.Open(t)
	if err := db.Exec(`CREATE TABLE widgets (id varchar(40) PRIMARY KEY, scope varchar(64) NOT NULL, name text NOT NULL)`).Error; err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, db: db, store: gormstore.New(db), clock: apitest.NewStoppedClock(time.Now().UTC())}
	cfg := idempotency.Config{
		Store:  h.store,
		Scope:  func(c echo.Context) (string, error) { return c.Request().Header.Get("X-Scope"), nil },
		Now:    h.clock.Now,
		TTL:    24 * time.Hour,
		Lease:  time.Minute,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Policy: func(c echo.Context) idempotency.Policy {
			if c.Path() == "/unsupported" {
				return idempotency.Unsupported
			}
			return idempotency.Supported
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = renderProblem
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			defer func() {
				if p := recover(); p != nil {
					c.Error(errors.New("panic"))
				}
			}()
			return next(c)
		}
	})
	e.Use(mw)
	e.POST("/widgets", h.createWidget)
	e.PUT("/widgets", h.createWidget)
	e.DELETE("/widgets/:id", h.deleteWidget)
	e.GET("/widgets", func(c echo.Context) error { return c.JSON(200, h.names()) })
	e.POST("/unsupported", func(c echo.Context) error { return c.NoContent(204) })
	h.e = e
	return h
}

func renderProblem(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	p := problem.As(err)
	if p == nil {
		p = problem.New(problem.Internal, "internal")
	}
	if p.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(p.RetryAfter.Seconds()))))
	}
	c.JSON(p.Status(), map[string]string{"code": string(p.Code)})
}

type widgetRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Fail makes the handler fail after its insert: "400", "500" or "panic".
	Fail string `json:"fail"`
}

func (h *harness) createWidget(c echo.Context) error {
	h.ran.Add(1)
	var req widgetRequest
	if err := json.NewDecoder(c.Request().Body).Decode(&req); err != nil {
		return problem.Invalid("body", "bad json")
	}
	ctx := c.Request().Context()
	scope := c.Request().Header.Get("X-Scope")
	if req.ID == "" {
		req.ID = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if err := database.Conn(ctx, h.db.DB).Exec(`INSERT INTO widgets (id, scope, name) VALUES (?, ?, ?)`, req.ID, scope, req.Name).Error; err != nil {
		return err
	}
	if h.gate != nil {
		<-h.gate
	}
	switch req.Fail {
	case "400":
		return problem.Invalid("name", "refused after writing")
	case "400-written":
		return c.JSON(http.StatusBadRequest, map[string]string{"code": "WRITTEN_BY_HANDLER"})
	case "500":
		return errors.New("boom")
	case "panic":
		panic("handler panicked after writing")
	}
	return c.JSON(http.StatusCreated, map[string]any{"id": req.ID, "name": req.Name, "at": time.Now().UnixNano()})
}

func (h *harness) deleteWidget(c echo.Context) error {
	h.ran.Add(1)
	res := database.Conn(c.Request().Context(), h.db.DB).Exec(`DELETE FROM widgets WHERE id = ?`, c.Param("id"))
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return problem.New(problem.NotFound, "no widget")
	}
	return c.NoContent(http.StatusNoContent)
}

// names returns every widget name, sorted.
func (h *harness) names() []string {
	var names []string
	if err := h.db.Raw(`SELECT name FROM widgets ORDER BY name`).Scan(&names).Error; err != nil {
		h.t.Fatal(err)
	}
	return names
}

func (h *harness) count(table string) int {
	var n int64
	if err := h.db.Table(table).Count(&n).Error; err != nil {
		h.t.Fatal(err)
	}
	return int(n)
}

func (h *harness) record(scope, method, path, key string) *idempotency.Record {
	rec, err := h.store.Lookup(context.Background(), idempotency.RecordKey{Scope: scope, Method: method, Path: path, Key: key})
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

type call struct {
	method, path, key, body, scope string
	// headers are added as given (for repeated or odd headers).
	headers [][2]string
	ctx     context.Context
}

func (h *harness) do(c call) *httptest.ResponseRecorder {
	if c.method == "" {
		c.method = http.MethodPost
	}
	if c.path == "" {
		c.path = "/widgets"
	}
	if c.scope == "" {
		c.scope = "tenant-a"
	}
	var rd io.Reader
	if c.body != "" {
		rd = strings.NewReader(c.body)
	}
	req := httptest.NewRequest(c.method, c.path, rd)
	if c.ctx != nil {
		req = req.WithContext(c.ctx)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Scope", c.scope)
	if c.key != "" {
		req.Header.Set("Idempotency-Key", c.key)
	}
	for _, kv := range c.headers {
		req.Header.Add(kv[0], kv[1])
	}
	rec := httptest.NewRecorder()
	h.e.ServeHTTP(rec, req)
	return rec
}

func code(rec *httptest.ResponseRecorder) string {
	var m map[string]any
	json.Unmarshal(rec.Body.Bytes(), &m)
	s, _ := m["code"].(string)
	return s
}
