// Package config reads riskapi's configuration once, from the environment and the
// command line (a flag overrides the variable of the same name), and validates it.
// No other package reads the environment, and no other package states a default:
// every variable, its default and its check are one row of settings (settings.go),
// and every timeout derived from the idempotency lease is computed in Leases.
// README.md lists the variables.
package config

import (
	"net"
	"time"
)

// Config is riskapi's configuration, one struct per component. A new variable is a
// field in its component's struct and a row in settings.
type Config struct {
	HTTP        HTTP
	Database    Database
	Auth        Auth
	Idempotency Idempotency
	Uploads     Uploads
	RateLimit   RateLimit
	Sweep       Sweep
	Due         Due
	Outbound    Outbound
	Tracing     Tracing
}

// HTTP configures the listener, client addresses and request bodies. The fields
// that are no variable are the promises of README.md's "Connections" and only tests
// change them.
type HTTP struct {
	Addr string // ADDR, default ":8080"
	// RequireIfMatch refuses a PATCH, PUT or DELETE of a risk, and a PATCH of an
	// action or a webhook endpoint, without If-Match with 428
	// PRECONDITION_REQUIRED: REQUIRE_IF_MATCH, default false.
	RequireIfMatch bool
	// MaxJSONBytes bounds a JSON request body (413 PAYLOAD_TOO_LARGE past it,
	// docs/errors.md). Not a variable: 1 MiB.
	MaxJSONBytes int64
	// IdleTimeout closes a keep-alive connection idle this long: HTTP_IDLE_TIMEOUT,
	// default 2m.
	IdleTimeout time.Duration
	// TrustedProxies are the networks whose X-Forwarded-For is believed for the
	// client address (TRUSTED_PROXIES, comma-separated CIDRs); empty: the
	// connection's address is the client's.
	TrustedProxies []*net.IPNet
	// MaxConnsPerClient is MAX_CONNS_PER_CLIENT, default 256: open connections per
	// client address — the connection's, TRUSTED_PROXIES do not apply — (an IPv4
	// address, an IPv6 /64); beyond, new ones are closed at once. 0: no cap.
	MaxConnsPerClient int
	// HeaderTimeout bounds the arrival of a request's headers. Not a variable: 10s.
	HeaderTimeout time.Duration
	// BodyTimeout bounds the arrival of a JSON (or other non-upload) body, from the
	// moment the route starts reading. Not a variable: 30s.
	BodyTimeout time.Duration
	// UploadMinRate is the slowest an upload may arrive: at least UploadMinRate
	// bytes in every UploadRateWindow, instead of a deadline for the whole body.
	// Not variables: 1 KiB/s over 10s windows (10 KiB per 10 s).
	UploadMinRate    int64
	UploadRateWindow time.Duration
	// TenantMaxInflight is TENANT_MAX_INFLIGHT, default 8: how many costly reads
	// (route.Route.Costly, docs/register.md) one tenant may have in flight on this
	// instance; one more is 429 CONCURRENCY_LIMITED. 0 turns the limit off.
	TenantMaxInflight int
	// InstanceMaxCostly is INSTANCE_MAX_COSTLY, default half the instance's CPUs
	// (GOMAXPROCS), at least 1: how many costly reads of all tenants run at once on
	// this instance. A tenant's costly read within its TENANT_MAX_INFLIGHT waits its
	// turn beyond it (turns go to the tenant with the fewest running), so costly
	// reads leave CPU to every other request; nothing else waits for them. 0 turns
	// the bound off.
	InstanceMaxCostly int
	// ShutdownGrace is how long in-flight requests may run after SIGTERM before
	// their connections are closed. Not a variable: 30s.
	ShutdownGrace time.Duration
	// RequestLog is REQUEST_LOG, default on: whether each authenticated request is
	// written to the request log (docs/requests.md). Off, nothing new is logged;
	// entries already stored stay listable until REQUEST_LOG_TTL, and the key
	// inspector, which reads idempotency records, is unaffected.
	RequestLog bool
}

// Database configures the store.
type Database struct {
	URL string // DATABASE_URL, default "sqlite://data/riskapi.db"
	// SecretKey is SECRET_KEY, at least 32 bytes; default "": a random key kept in
	// the data directory's secret.key (secretkey.Load), never in the database.
	SecretKey string
	// MaxConns is DATABASE_MAX_CONNS, default 32: the most connections one
	// instance opens to PostgreSQL (docs/deploying.md, Sizing). SQLite ignores it.
	MaxConns int
	// ReadURL is DATABASE_READ_URL, default "": a postgres:// replica the lists
	// read from (docs/deploying.md, Replicas).
	ReadURL string
	// Pooler is DATABASE_POOLER, default "": "transaction" when DATABASE_URL points
	// at a transaction-mode pooler, so that no prepared statement outlives its
	// transaction; unset, statements stay prepared (docs/deploying.md, PgBouncer).
	Pooler string
	// QueryTimeout is QUERY_TIMEOUT, default 10s: each store call of a read (a GET)
	// is cancelled in the store after it (503 QUERY_TIMEOUT), when that is sooner
	// than the lease's Store bound every call has.
	QueryTimeout time.Duration
}

// Auth configures browser sessions.
type Auth struct {
	// JWTSecret is JWT_SECRET, at least 32 bytes; default "": a key derived from
	// SECRET_KEY.
	JWTSecret string
}

// Idempotency configures the idempotency engine (docs/idempotency.md).
type Idempotency struct {
	TTL      time.Duration // IDEMPOTENCY_TTL, default 24h
	Lease    time.Duration // IDEMPOTENCY_LEASE, default 1m, at least 2s
	Required bool          // IDEMPOTENCY_REQUIRED, default false
}

// Uploads configures attachment uploads (docs/uploads-and-webhooks.md).
type Uploads struct {
	Dir      string // UPLOAD_DIR, default "data/uploads"
	MaxBytes int64  // MAX_UPLOAD_BYTES, default 1 GiB
	// MaxImportRows bounds a CSV import of risks (413 past it, docs/register.md):
	// MAX_IMPORT_ROWS, default 100000.
	MaxImportRows int
	// ImportTimeout is IMPORT_TIMEOUT, default 5m: bounds a CSV import's store
	// calls, its transactions included, in place of the lease's Store bound (an
	// import of MAX_IMPORT_ROWS rows outlasts 30 s). A keyed import is still cut at
	// its lease's handler deadline (Leases.Handler).
	ImportTimeout time.Duration
}

// RateLimit configures the per-credential rate limit.
type RateLimit struct {
	RPS   float64 // RATE_LIMIT_RPS, default 100; 0 turns limiting off
	Burst int     // RATE_LIMIT_BURST, default 200
	// TestRPS and TestBurst are TEST_RATE_LIMIT_RPS and TEST_RATE_LIMIT_BURST: the
	// limit of each credential in test mode, counted apart from its live requests
	// (docs/sandboxes.md); nil: half of RPS and of Burst (Test).
	TestRPS   *float64
	TestBurst *int
	// RedisURL is REDIS_URL (redis://…): when set, every instance counts against
	// one shared limit kept in Redis; default "": each instance counts alone.
	RedisURL string
	// RedisPrefix starts every key the limiter writes in Redis, so that several
	// deployments (or tests) can share one Redis. Not a variable: "riskapi:".
	RedisPrefix string
}

// Test returns the limit of a credential in test mode: TestRPS and TestBurst, or
// half the live limit where they are unset (at least one request of burst while
// limiting is on).
func (r RateLimit) Test() (rps float64, burst int) {
	rps, burst = r.RPS/2, r.Burst/2
	if r.Burst > 0 {
		burst = max(1, burst)
	}
	if r.TestRPS != nil {
		rps = *r.TestRPS
	}
	if r.TestBurst != nil {
		burst = *r.TestBurst
	}
	return rps, burst
}

// Sweep configures the scheduled clean-up of expired records. Retention settings of
// the records it removes (REQUEST_LOG_TTL, EVENT_TTL, AUDIT_LOG_TTL) belong here.
type Sweep struct {
	Schedule string // SWEEP_SCHEDULE, robfig/cron spec, default "@every 10m"
	// RequestLogTTL is REQUEST_LOG_TTL, default 720h: how long request-log entries
	// are kept (docs/requests.md).
	RequestLogTTL time.Duration
	// EventTTL is EVENT_TTL, default 720h: how long events are kept and listable.
	EventTTL time.Duration
	// AuditLogTTL is AUDIT_LOG_TTL, default 8760h (a year, what SOC 2 and ISO 27001
	// audits usually look back on): how long audit-log entries are kept
	// (docs/audit-log.md).
	AuditLogTTL time.Duration
}

// Due configures the schedule that finds what has come due in the register and
// emits its notices, once each (docs/register.md, Due dates).
type Due struct {
	// Schedule is SCHEDULE_SPEC, a robfig/cron spec, default "@every 1m": how often
	// each instance looks.
	Schedule string
	// ReviewDueDays is REVIEW_DUE_DAYS, default 7: how many days before a risk's
	// reviewDate risk.review_due is emitted.
	ReviewDueDays int
}

// Outbound configures the delivery of events to webhook endpoints (docs/events.md).
type Outbound struct {
	// RetryFor is WEBHOOK_RETRY_FOR, default 72h: how long a failing delivery is retried.
	RetryFor time.Duration
	// AllowPrivate is WEBHOOK_ALLOW_PRIVATE, default false: when true, endpoints may
	// be loopback or private addresses (tests, on-premise).
	AllowPrivate bool
	// EndpointsMax is WEBHOOK_ENDPOINTS_MAX, default 16: outbound endpoints per
	// tenant; creating one more is 400.
	EndpointsMax int
	// EndpointConcurrency is WEBHOOK_ENDPOINT_CONCURRENCY, default 2: deliveries in
	// flight to one endpoint, per instance (docs/events.md).
	EndpointConcurrency int
	// AutoDisableAfter is WEBHOOK_AUTO_DISABLE_AFTER, default 72h: an endpoint whose
	// every delivery has failed for this long is disabled (docs/events.md).
	AutoDisableAfter time.Duration
}

// Tracing configures OpenTelemetry tracing (docs/tracing.md).
type Tracing struct {
	// Endpoint is OTEL_EXPORTER_OTLP_ENDPOINT, default "": the OTLP/HTTP collector
	// (http://host:4318) spans are exported to. Unset, riskapi makes no span and
	// installs no tracing middleware, callback or transport.
	Endpoint string
}

// Leases are the timeouts that must fit inside the idempotency lease, derived from
// it in one place (Leases) so that they cannot drift apart: a keyed request's
// record is only taken over once its lease ends, so nothing the request holds may
// outlive it.
type Leases struct {
	// Handler bounds a keyed request's handler and commit: 4/5 of the lease, so a
	// live request is never taken over.
	Handler time.Duration
	// IdleInTx makes PostgreSQL abort a session idle inside a transaction this long
	// (a hung or partitioned process cannot hold a lock past the lease): the lease.
	IdleInTx time.Duration
	// Store bounds every wait on the store on a request's path: each statement,
	// each unkeyed write's transaction, and a SQLite statement's wait for the write
	// lock (its busy timeout). Half the lease: a request whose store stops answering
	// (frozen, partitioned) is answered 503 STORE_UNAVAILABLE then, whatever it is —
	// authentication, a read, an unkeyed or a keyed write — and waiting cannot
	// outlast a keyed handler's deadline.
	Store time.Duration
	// OrphanGrace is how old unreferenced attachment bytes must be before the sweep
	// removes them: well past the lease, beyond which no request's transaction
	// survives, and at least an hour.
	OrphanGrace time.Duration
}

// Leases derives the lease-bound timeouts from i.Lease.
func (i Idempotency) Leases() Leases {
	return Leases{
		Handler:     i.Lease * 4 / 5,
		IdleInTx:    i.Lease,
		Store:       i.Lease / 2,
		OrphanGrace: max(time.Hour, 2*i.Lease),
	}
}
