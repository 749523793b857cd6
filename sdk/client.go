package riskapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Version is the SDK version, sent in the User-Agent header so that server
// operators can tell which client produced a request.
const Version = "0.1.0"

// APIVersion is the API version this SDK's types are written for, sent as
// Riskapi-Version on every request (docs/api-versions.md): its answers keep these
// shapes whatever the tenant's pin.
const APIVersion = "2027-01-15"

// Defaults of the client's options. They follow docs/sdk.md (Retry policy): each
// wait is capped at 30 s and a whole call is given up after about a minute.
const (
	// DefaultBaseURL is where the client sends requests without WithBaseURL:
	// the server's default listen address on this machine.
	DefaultBaseURL = "http://localhost:8080"
	// DefaultMaxRetries is how many times a call is retried after its first
	// attempt. It is high enough that DefaultMaxElapsed is what normally
	// ends a call, as the contract intends (a 409 with "Retry-After: 1"
	// keeps being retried while the first request may still finish), and
	// low enough that a server answering without any wait is not hammered.
	DefaultMaxRetries = 20
	// DefaultMaxWait caps a single backoff wait, Retry-After included.
	DefaultMaxWait = 30 * time.Second
	// DefaultMaxElapsed is the budget of one call, retries and waits included.
	DefaultMaxElapsed = time.Minute
	// DefaultResponseHeaderTimeout bounds how long the default HTTP client
	// waits for response headers once a request is fully sent. The server
	// bounds a handler below its one-minute idempotency lease, so a longer
	// silence means the answer is lost and the attempt should be retried.
	DefaultResponseHeaderTimeout = 2 * time.Minute
)

// baseWait is the backoff before the first retry; it doubles for each further
// retry (full jitter is applied on top, see sleepTime).
const baseWait = 500 * time.Millisecond

// Client talks to one riskapi server with one API key. It is safe for
// concurrent use by multiple goroutines; create it once and reuse it, since it
// holds the HTTP connection pool.
type Client struct {
	// Risks manages risks: /v2/risks.
	Risks *RisksService
	// Attachments manages files attached to risks.
	Attachments *AttachmentsService
	// Requests reads the request log: /v2/requests.
	Requests *RequestsService
	// IdempotencyKeys inspects idempotency keys: /v2/idempotency-keys.
	IdempotencyKeys *IdempotencyKeysService
	// Events reads the tenant's events: /v2/events.
	Events *EventsService
	// AuditLog reads the tenant's audit log and risks' histories: /v2/audit-log.
	AuditLog *AuditLogService
	// Reviews records and lists reviews of risks: /v2/risks/{id}/reviews.
	Reviews *ReviewsService
	// Actions manages treatment actions: /v2/actions.
	Actions *ActionsService
	// Acceptances requests and lists acceptances: /v2/acceptances.
	Acceptances *AcceptancesService

	apiKey     string
	baseURL    *url.URL
	httpClient *http.Client
	userAgent  string
	logger     *slog.Logger

	maxRetries int
	maxWait    time.Duration
	maxElapsed time.Duration

	// now and sleep are the client's clock; tests replace them (WithClock,
	// WithSleep) so that backoff is observable and never really waits.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	// jitter returns a uniformly random duration in [0, n); replaced in
	// unit tests to make sleepTime deterministic.
	jitter func(n time.Duration) time.Duration

	common service // reused by all services, like go-github, to avoid an allocation per service
}

// service is the common base of the typed services; each service is a
// distinct named type of it so that methods group by resource.
type service struct {
	client *Client
}

// Option configures a Client in NewClient. An option that is given an invalid
// value makes NewClient return an error rather than silently using a default.
type Option func(*Client) error

// NewClient returns a client that authenticates every request with apiKey
// (sent as "Authorization: Bearer <apiKey>").
//
// It returns an error if apiKey is empty or contains whitespace or control
// characters, or if any option is invalid; no request is made.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	if apiKey == "" {
		return nil, errors.New("riskapi: NewClient: empty API key")
	}
	if strings.IndexFunc(apiKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		// Reject early: a key with a newline would otherwise fail on
		// every request with an unhelpful header error.
		return nil, errors.New("riskapi: NewClient: API key contains whitespace or control characters")
	}
	base, _ := url.Parse(DefaultBaseURL)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	c := &Client{
		apiKey:  apiKey,
		baseURL: base,
		httpClient: &http.Client{
			Transport: tr,
			// The API never redirects; following one would turn a POST
			// into a GET. A 3xx is returned as an *Error instead.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		userAgent:  "riskapi-go/" + Version,
		logger:     slog.New(slog.DiscardHandler),
		maxRetries: DefaultMaxRetries,
		maxWait:    DefaultMaxWait,
		maxElapsed: DefaultMaxElapsed,
		now:        time.Now,
		sleep:      sleepContext,
		jitter:     func(n time.Duration) time.Duration { return rand.N(n) },
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(c); err != nil {
			return nil, fmt.Errorf("riskapi: NewClient: %w", err)
		}
	}
	c.common.client = c
	c.Risks = (*RisksService)(&c.common)
	c.Attachments = (*AttachmentsService)(&c.common)
	c.Requests = (*RequestsService)(&c.common)
	c.IdempotencyKeys = (*IdempotencyKeysService)(&c.common)
	c.Events = (*EventsService)(&c.common)
	c.AuditLog = (*AuditLogService)(&c.common)
	c.Reviews = (*ReviewsService)(&c.common)
	c.Actions = (*ActionsService)(&c.common)
	c.Acceptances = (*AcceptancesService)(&c.common)
	return c, nil
}

// WithBaseURL sets the server's root URL, scheme and host plus an optional
// path prefix (for a server behind a reverse proxy), e.g.
// "http://127.0.0.1:8080" or "https://example.com/riskapi". The SDK appends
// "/v2/…" itself. It must be an absolute http or https URL without query or
// fragment. Default: DefaultBaseURL.
func WithBaseURL(rawURL string) Option {
	return func(c *Client) error {
		u, err := url.Parse(rawURL)
		if err != nil {
			return fmt.Errorf("WithBaseURL: %w", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("WithBaseURL: %q: scheme must be http or https", rawURL)
		}
		if u.Host == "" {
			return fmt.Errorf("WithBaseURL: %q: missing host", rawURL)
		}
		if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("WithBaseURL: %q: must not carry a query, fragment or user info", rawURL)
		}
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
		c.baseURL = u
		return nil
	}
}

// WithHTTPClient makes the client send requests through hc, e.g. one with a
// custom Transport, proxy or TLS configuration. Beware that hc.Timeout bounds
// a whole attempt including the reading of a download's body. Must not be nil.
// Default: a client with a clone of http.DefaultTransport whose
// ResponseHeaderTimeout is DefaultResponseHeaderTimeout, and that does not
// follow redirects.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("WithHTTPClient: nil *http.Client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithMaxRetries sets how many times a call may be retried after its first
// attempt; 0 disables retries. Must not be negative. Default:
// DefaultMaxRetries. Whichever of this and WithMaxElapsed is reached first
// ends the call.
func WithMaxRetries(n int) Option {
	return func(c *Client) error {
		if n < 0 {
			return fmt.Errorf("WithMaxRetries: %d is negative", n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithMaxWait caps a single wait between two attempts, including a wait asked
// for by Retry-After (a longer Retry-After is cut to d). Must be positive.
// Default: DefaultMaxWait (30 s).
func WithMaxWait(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("WithMaxWait: %v is not positive", d)
		}
		c.maxWait = d
		return nil
	}
}

// WithMaxElapsed sets the time budget of one call, measured from its first
// attempt: no retry is started whose wait would end past it, and the call then
// returns the last error. An attempt already under way is not cut short (use
// the context for a hard deadline). Must be positive. Default:
// DefaultMaxElapsed (1 minute).
func WithMaxElapsed(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("WithMaxElapsed: %v is not positive", d)
		}
		c.maxElapsed = d
		return nil
	}
}

// WithLogger makes the client log each attempt (debug level) and each retry
// decision (info level) to l. The API key is never logged. Must not be nil.
// Default: no logging.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) error {
		if l == nil {
			return errors.New("WithLogger: nil *slog.Logger")
		}
		c.logger = l
		return nil
	}
}

// WithUserAgent prefixes the User-Agent header with product, e.g.
// "my-app/1.2", so that server logs show which integration sent a request.
// Must not be empty.
func WithUserAgent(product string) Option {
	return func(c *Client) error {
		if strings.TrimSpace(product) == "" {
			return errors.New("WithUserAgent: empty product")
		}
		c.userAgent = product + " riskapi-go/" + Version
		return nil
	}
}

// WithSleep replaces how the client waits between attempts. sleep must wait
// for d or until ctx is done, whichever comes first, and return ctx.Err() in
// the latter case. It exists for tests, which record the requested waits
// instead of waiting; pair it with WithClock so that the MaxElapsed budget
// sees the simulated time pass. Must not be nil.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) error {
		if sleep == nil {
			return errors.New("WithSleep: nil func")
		}
		c.sleep = sleep
		return nil
	}
}

// WithClock replaces the clock the client reads to enforce MaxElapsed and to
// turn a Retry-After HTTP-date into a wait. It exists for tests. Must not be
// nil. Default: time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *Client) error {
		if now == nil {
			return errors.New("WithClock: nil func")
		}
		c.now = now
		return nil
	}
}

// sleepContext waits for d, returning early with ctx.Err() when ctx is done,
// so that a cancelled call stops waiting at once.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Ptr returns a pointer to a copy of v. Optional fields of params are
// pointers so that "not given" differs from a zero value; Ptr lets callers
// fill them inline: Likelihood: riskapi.Ptr(3).
func Ptr[T any](v T) *T { return &v }
