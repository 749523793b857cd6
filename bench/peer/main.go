// Command peer is issue 26's comparison app: the create-risk request riskapi serves,
// on Echo + GORM + PostgreSQL, made idempotent by the gopotency library
// (github.com/fco-gt/gopotency, its Echo middleware and GORM store). It answers
// what cmd/loadgen sends and checks — POST /v2/risks (201, Idempotent-Replayed
// false/true on keyed requests, the byte-identical body on a replay), GET
// /v2/risks/{id} and the keyset-paged GET /v2/risks?limit=&cursor= — and nothing
// else. It is not part of riskapi; build and run it with bench/peer/run.sh, which
// points the module at a local copy of gopotency's source (docs/performance.md,
// section "The peer (gopotency)").
//
// Per request it does the work a comparable riskapi write does on the request path:
// the API key's read (SHA-256 of the Bearer secret, one SELECT), then one
// transaction with the risk's INSERT, an audit entry and a risk.created event.
// With -lean the handler writes the risk alone. With -riskapi-schema it writes the
// same rows riskapi writes, into a database riskapi has migrated (`api migrate`):
// riskapi's risks row with its indexes and heat-count trigger, its audit_log entry,
// its event and the event's webhook deliveries, and reads the API key from
// riskapi's api_keys; gopotency's own two tables go in a schema "peer" of their own
// (they share a name with riskapi's). That is the peer doing riskapi's work, row for
// row (docs/performance.md, "The peer (gopotency)").
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	idempotency "github.com/fco-gt/gopotency"
	idemecho "github.com/fco-gt/gopotency/middleware/echo"
	idemgorm "github.com/fco-gt/gopotency/storage/gorm"
	"github.com/labstack/echo/v4"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// schema is the peer's tables. gopotency's GORM model declares its record's data
// as `blob`, which PostgreSQL has not, so its two tables are created here with
// bytea instead of by AutoMigrate (same columns, keys and index).
const schema = `
CREATE TABLE IF NOT EXISTS api_keys (hash text PRIMARY KEY, tenant_id text NOT NULL, scopes text NOT NULL);
CREATE TABLE IF NOT EXISTS risks (
  id text PRIMARY KEY, tenant_id text NOT NULL, title text NOT NULL, description text NOT NULL,
  category text NOT NULL, likelihood int NOT NULL, impact int NOT NULL, owner text NOT NULL,
  created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE INDEX IF NOT EXISTS risks_tenant_id ON risks (tenant_id, id);
CREATE TABLE IF NOT EXISTS audit_entries (
  id text PRIMARY KEY, tenant_id text NOT NULL, action text NOT NULL, object_id text NOT NULL,
  changes jsonb NOT NULL, occurred_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  id text PRIMARY KEY, tenant_id text NOT NULL, type text NOT NULL, payload jsonb NOT NULL,
  created_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency_records (key varchar(255) PRIMARY KEY, data bytea NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX IF NOT EXISTS idx_idempotency_records_expires_at ON idempotency_records (expires_at);
CREATE TABLE IF NOT EXISTS idempotency_locks (key varchar(255) PRIMARY KEY, expires_at timestamptz NOT NULL);
`

// riskapiSchema is what -riskapi-schema adds to a database migrated by riskapi: a
// tenant and its API key (the SHA-256 of PEER_API_KEY, as the peer's own table keys
// it), and gopotency's two tables in the schema "peer", found first on the
// connections' search_path.
const riskapiSchema = `
CREATE SCHEMA IF NOT EXISTS peer;
CREATE TABLE IF NOT EXISTS peer.idempotency_records (key varchar(255) PRIMARY KEY, data bytea NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX IF NOT EXISTS idx_idempotency_records_expires_at ON peer.idempotency_records (expires_at);
CREATE TABLE IF NOT EXISTS peer.idempotency_locks (key varchar(255) PRIMARY KEY, expires_at timestamptz NOT NULL);
INSERT INTO public.tenants (id, name, created_at) VALUES ('ten_peer', 'peer', now()) ON CONFLICT DO NOTHING;
`

// RiskRow is riskapi's risks row (-riskapi-schema), every column its create writes.
type RiskRow struct {
	ID                 string `gorm:"primaryKey"`
	TenantID           string
	Title              string
	Description        string
	Category           string
	Likelihood         *int
	Impact             *int
	RiskScore          *int
	Status             string
	Owner              string
	OwnerUserID        *string
	ExternalID         *string
	Version            int
	Treatment          *string
	ReviewDate         *string
	ReviewEvery        *string
	ResidualLikelihood *int
	ResidualImpact     *int
	ResidualScore      *int
	Metadata           string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// TableName is riskapi's table.
func (RiskRow) TableName() string { return "risks" }

// answer is the row as the peer answers it.
func (r RiskRow) answer() Risk {
	out := Risk{ID: r.ID, TenantID: r.TenantID, Title: r.Title, Description: r.Description, Category: r.Category,
		Owner: r.Owner, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.Likelihood != nil && r.Impact != nil {
		out.Likelihood, out.Impact = *r.Likelihood, *r.Impact
	}
	return out
}

// AuditRow is riskapi's audit_log entry (-riskapi-schema).
type AuditRow struct {
	ID         string `gorm:"primaryKey"`
	TenantID   string
	OccurredAt time.Time
	ActorType  string
	ActorID    string
	ActorEmail string
	Action     string
	TargetType string
	TargetID   string
	Changes    string
	RequestID  string
	IP         string
	UserAgent  string
}

// TableName is riskapi's table.
func (AuditRow) TableName() string { return "audit_log" }

// Risk is a risk as stored and as answered (a subset of riskapi's fields).
type Risk struct {
	ID          string    `json:"id" gorm:"primaryKey"`
	TenantID    string    `json:"-"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Category    string    `json:"category"`
	Likelihood  int       `json:"likelihood"`
	Impact      int       `json:"impact"`
	Score       int       `json:"score" gorm:"-"`
	Owner       string    `json:"owner"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// AuditEntry is one audit-log row per write.
type AuditEntry struct {
	ID         string `gorm:"primaryKey"`
	TenantID   string
	Action     string
	ObjectID   string
	Changes    string `gorm:"type:jsonb"`
	OccurredAt time.Time
}

// Event is one risk.created event per write.
type Event struct {
	ID        string `gorm:"primaryKey"`
	TenantID  string
	Type      string
	Payload   string `gorm:"type:jsonb"`
	CreatedAt time.Time
}

// APIKey maps the SHA-256 of a Bearer secret to its tenant.
type APIKey struct {
	Hash     string `gorm:"primaryKey"`
	TenantID string
	Scopes   string
}

type server struct {
	db      *gorm.DB
	lean    bool
	riskapi bool // -riskapi-schema
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	lean := flag.Bool("lean", false, "write the risk alone: no audit entry, no event")
	maxConns := flag.Int("max-conns", 32, "database pool size (riskapi's default DATABASE_MAX_CONNS is 32)")
	riskapi := flag.Bool("riskapi-schema", false, "write riskapi's rows into a database riskapi has migrated")
	reqlog := flag.Bool("request-log", false, "with -riskapi-schema: keep riskapi's request log as riskapi does (requestlog.go)")
	flag.Parse()
	if *reqlog && !*riskapi {
		fmt.Fprintln(os.Stderr, "peer: -request-log writes riskapi's table: give -riskapi-schema too")
		os.Exit(2)
	}
	dsn, key := os.Getenv("DATABASE_URL"), os.Getenv("PEER_API_KEY")
	if dsn == "" || key == "" {
		fmt.Fprintln(os.Stderr, "peer: set DATABASE_URL (PostgreSQL) and PEER_API_KEY (the Bearer secret to accept)")
		os.Exit(2)
	}
	if *riskapi {
		// gopotency's tables are found in "peer" before riskapi's of the same name.
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + "search_path=peer,public"
	}
	if err := run(*addr, dsn, key, *lean, *riskapi, *reqlog, *maxConns); err != nil {
		slog.Error("peer", "err", err)
		os.Exit(1)
	}
}

func run(addr, dsn, key string, lean, riskapi, reqlog bool, maxConns int) error {
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	sum := sha256.Sum256([]byte(key))
	if riskapi {
		if err := db.Exec(riskapiSchema).Error; err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		if err := db.Exec(`INSERT INTO public.api_keys (id, tenant_id, name, secret_hash, scopes, created_at)
			VALUES ('key_peer', 'ten_peer', 'peer', ?, 'risks:read,risks:write', now()) ON CONFLICT DO NOTHING`,
			hex.EncodeToString(sum[:])).Error; err != nil {
			return fmt.Errorf("provision the API key: %w", err)
		}
	} else {
		if err := db.Exec(schema).Error; err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		if err := db.Exec(`INSERT INTO api_keys (hash, tenant_id, scopes) VALUES (?, 'peer-tenant', 'risks:read,risks:write')
			ON CONFLICT (hash) DO NOTHING`, hex.EncodeToString(sum[:])).Error; err != nil {
			return fmt.Errorf("provision the API key: %w", err)
		}
	}
	mgr, err := idempotency.NewManager(idempotency.Config{
		Storage: idemgorm.NewGormStorage(db),
		TTL:     24 * time.Hour, LockTimeout: time.Minute, // riskapi: 24 h records, 1 min lease
	})
	if err != nil {
		return err
	}
	s := &server{db: db, lean: lean, riskapi: riskapi}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	v2 := e.Group("/v2", s.auth)
	if reqlog {
		v2.Use(newRequestLog(sqlDB).middleware)
	}
	v2.POST("/risks", s.create, replayedHeader, idemecho.Idempotency(mgr))
	v2.GET("/risks/:id", s.get)
	v2.GET("/risks", s.list)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- e.Start(addr) }()
	slog.Info("peer listening", "addr", addr, "lean", lean, "riskapiSchema", riskapi, "requestLog", reqlog, "maxConns", maxConns)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.Shutdown(sctx)
}

// auth reads the API key by the SHA-256 of its secret, as riskapi does (not cached).
func (s *server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		secret, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
		if !ok || secret == "" {
			return echo.NewHTTPError(http.StatusUnauthorized, "missing API key")
		}
		sum := sha256.Sum256([]byte(secret))
		var k APIKey
		q := s.db.WithContext(c.Request().Context())
		var err error
		if s.riskapi {
			err = q.Table("public.api_keys").Select("tenant_id, scopes").
				Where("secret_hash = ? AND revoked_at IS NULL", hex.EncodeToString(sum[:])).Take(&k).Error
		} else {
			err = q.Where("hash = ?", hex.EncodeToString(sum[:])).Take(&k).Error
		}
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return echo.NewHTTPError(http.StatusUnauthorized, "unknown API key")
		}
		if err != nil {
			return err
		}
		c.Set("tenant", k.TenantID)
		return next(c)
	}
}

// replayedHeader translates gopotency's X-Idempotent-Replayed into the
// Idempotent-Replayed: true|false that riskapi sends (and loadgen checks) on keyed
// requests. It runs just before the status line is written; on a first execution
// gopotency stores the headers after that, so a replay starts with "false" from
// the stored ones and this turns it into "true".
func replayedHeader(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Header.Get("Idempotency-Key") != "" {
			res := c.Response()
			res.Before(func() {
				h := res.Header()
				switch {
				case h.Get("X-Idempotent-Replayed") == "true":
					h.Set("Idempotent-Replayed", "true")
				case c.Get("executed") == true: // not on gopotency's 409/422
					h.Set("Idempotent-Replayed", "false")
				}
			})
		}
		return next(c)
	}
}

type createRequest struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Category    string `json:"category"`
	Likelihood  int    `json:"likelihood"`
	Impact      int    `json:"impact"`
	// Owner is as riskapi's newest version takes it (docs/api-versions.md): a name
	// owner {"name": …}, so that loadgen sends both servers one body.
	Owner struct {
		Name string `json:"name"`
	} `json:"owner"`
}

func (s *server) create(c echo.Context) error {
	var in createRequest
	if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "body is not a risk")
	}
	if in.Title == "" || len(in.Title) > 200 || in.Likelihood < 1 || in.Likelihood > 5 || in.Impact < 1 || in.Impact > 5 {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "title 1–200 characters, likelihood and impact 1–5")
	}
	tenant := c.Get("tenant").(string)
	c.Set("executed", true)
	now := time.Now().UTC()
	r := Risk{ID: newID(), TenantID: tenant, Title: in.Title, Description: in.Description, Category: in.Category,
		Likelihood: in.Likelihood, Impact: in.Impact, Owner: in.Owner.Name, CreatedAt: now, UpdatedAt: now}
	r.Score = r.Likelihood * r.Impact
	if s.riskapi {
		r.ID = "risk_" + r.ID // riskapi's ids are typed
		if err := s.createRiskapiRows(c, r); err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, r)
	}
	err := s.db.WithContext(c.Request().Context()).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&r).Error; err != nil {
			return err
		}
		if s.lean {
			return nil
		}
		body, _ := json.Marshal(r)
		if err := tx.Create(&AuditEntry{ID: newID(), TenantID: tenant, Action: "risk.create", ObjectID: r.ID,
			Changes: string(body), OccurredAt: now}).Error; err != nil {
			return err
		}
		return tx.Create(&Event{ID: newID(), TenantID: tenant, Type: "risk.created",
			Payload: `{"type":"risk.created","data":` + string(body) + `}`, CreatedAt: now}).Error
	})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// createRiskapiRows writes r as riskapi's rows, in one transaction: the risk, its
// audit entry, its risk.created event and the event's deliveries to the tenant's
// subscribed endpoints (none in the benchmark: the statement still runs, as
// riskapi's does).
func (s *server) createRiskapiRows(c echo.Context, r Risk) error {
	req := c.Request()
	score := r.Likelihood * r.Impact
	row := RiskRow{ID: r.ID, TenantID: r.TenantID, Title: r.Title, Description: r.Description,
		Category: r.Category, Likelihood: &r.Likelihood, Impact: &r.Impact, RiskScore: &score, Status: "open",
		Owner: r.Owner, Version: 1, Metadata: "{}", CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	return s.db.WithContext(req.Context()).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if s.lean {
			return nil
		}
		body, _ := json.Marshal(r)
		if err := tx.Create(&AuditRow{ID: "aud_" + newID(), TenantID: r.TenantID, OccurredAt: r.CreatedAt,
			ActorType: "api_key", ActorID: "key_peer", Action: "risk.created", TargetType: "risk", TargetID: row.ID,
			Changes: string(body), RequestID: "req_" + newID(), IP: c.RealIP(), UserAgent: req.UserAgent()}).Error; err != nil {
			return err
		}
		ev := Event{ID: "evt_" + newID(), TenantID: r.TenantID, Type: "risk.created",
			Payload: `{"type":"risk.created","data":` + string(body) + `}`, CreatedAt: r.CreatedAt}
		if err := tx.Create(&ev).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO webhook_deliveries (tenant_id, event_id, endpoint_id, state, attempts,
			next_attempt_at, retry_until, created_at)
			SELECT e.tenant_id, ?, e.id, 'pending', 0, now(), now() + interval '3 days', now() FROM webhook_endpoints e
			WHERE e.tenant_id = ? AND (e.event_types = '*' OR e.event_types LIKE '%,risk.created,%') AND e.disabled_at IS NULL`,
			ev.ID, r.TenantID).Error
	})
}

func (s *server) get(c echo.Context) error {
	var r Risk
	var err error
	if s.riskapi {
		var row RiskRow
		err = s.db.WithContext(c.Request().Context()).Where("tenant_id = ? AND id = ?", c.Get("tenant"), c.Param("id")).Take(&row).Error
		r = row.answer()
	} else {
		err = s.db.WithContext(c.Request().Context()).Where("tenant_id = ? AND id = ?", c.Get("tenant"), c.Param("id")).Take(&r).Error
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "no such risk")
	}
	if err != nil {
		return err
	}
	r.Score = r.Likelihood * r.Impact
	return c.JSON(http.StatusOK, r)
}

// list pages the tenant's risks by id: limit (1–100, default 100) and the cursor
// of the previous page (the last id), answering {data, hasMore, nextCursor}.
func (s *server) list(c echo.Context) error {
	limit, err := strconv.Atoi(c.QueryParam("limit"))
	if err != nil || limit < 1 || limit > 100 {
		limit = 100
	}
	q := s.db.WithContext(c.Request().Context()).Where("tenant_id = ?", c.Get("tenant"))
	if cur := c.QueryParam("cursor"); cur != "" {
		q = q.Where("id > ?", cur)
	}
	var rs []Risk
	if s.riskapi {
		if cur := c.QueryParam("cursor"); cur != "" {
			q = s.db.WithContext(c.Request().Context()).Where("tenant_id = ? AND id > ?", c.Get("tenant"), cur)
		}
		var rows []RiskRow
		if err := q.Order("id").Limit(limit + 1).Find(&rows).Error; err != nil {
			return err
		}
		for _, row := range rows {
			rs = append(rs, row.answer())
		}
	} else if err := q.Order("id").Limit(limit + 1).Find(&rs).Error; err != nil {
		return err
	}
	out := struct {
		Data       []Risk  `json:"data"`
		HasMore    bool    `json:"hasMore"`
		NextCursor *string `json:"nextCursor"`
	}{Data: rs}
	if len(rs) > limit {
		out.Data, out.HasMore = rs[:limit], true
		next := rs[limit-1].ID
		out.NextCursor = &next
	}
	for i := range out.Data {
		out.Data[i].Score = out.Data[i].Likelihood * out.Data[i].Impact
	}
	return c.JSON(http.StatusOK, out)
}

// newID is 16 random bytes in hex, prefixed by the time so ids sort roughly by
// creation.
func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return fmt.Sprintf("%016x%s", time.Now().UnixNano(), hex.EncodeToString(b))
}
