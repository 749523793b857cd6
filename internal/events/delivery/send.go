package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.opentelemetry.io/otel/trace"

	"github.com/riskapi/riskapi/internal/tracing"
)

// AttemptTimeout bounds one attempt: a 2xx must arrive within it (docs/events.md).
const AttemptTimeout = 10 * time.Second

// UserAgent identifies riskapi's deliveries to receivers.
const UserAgent = "riskapi-webhooks/1"

// Sender POSTs signed events to endpoints.
type Sender struct {
	client *http.Client
	now    func() time.Time
	// tracer and parents are set by Trace; nil: attempts are not traced.
	tracer  trace.Tracer
	parents *tracing.Parents
}

// NewSender returns a Sender dialling through guard, with now as its clock (nil:
// time.Now). It never follows redirects (a 3xx is a failed attempt: a redirect
// could point anywhere) and ignores proxy settings in the environment.
func NewSender(guard *Guard, now func() time.Time) *Sender {
	if now == nil {
		now = time.Now
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           guard.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   16, // at least Worker.PerEndpoint: connections are reused, not redialled
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: AttemptTimeout,
	}
	return &Sender{now: now, client: &http.Client{
		Transport: tr,
		Timeout:   AttemptTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Sign returns the Standard Webhooks headers of payload sent as message id at ts:
// webhook-id, webhook-timestamp (unix seconds) and webhook-signature
// ("v1,<base64 HMAC-SHA256 of id.timestamp.payload>", keyed by the base64-decoded
// part of a secret after "whsec_"), one signature per secret, space-separated, as
// Standard Webhooks allows so that a secret can roll without a gap. Errors: no
// secret, or one that is not whsec_ + base64.
func Sign(secrets []string, id string, ts time.Time, payload []byte) (http.Header, error) {
	if len(secrets) == 0 {
		return nil, errors.New("delivery: no endpoint secret")
	}
	sigs := make([]string, len(secrets))
	for i, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return nil, errors.New("delivery: malformed endpoint secret")
		}
		if sigs[i], err = wh.Sign(id, ts, payload); err != nil {
			return nil, err
		}
	}
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, id)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, strings.Join(sigs, " "))
	return h, nil
}

// Send makes one attempt at j and returns its log entry: StatusCode 0 when no
// response arrived, Error "" when delivered (a 2xx within AttemptTimeout).
func (s *Sender) Send(ctx context.Context, j *Job) (status int, failure string, d time.Duration) {
	start := s.now()
	ctx, end := s.startSpan(ctx, j)
	defer func() { d = s.now().Sub(start); end(status, failure) }()
	h, err := Sign(j.Secrets, j.EventID, start, j.Payload)
	if err != nil {
		return 0, "the endpoint's secret is malformed", 0
	}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Payload))
	if err != nil {
		return 0, "the endpoint URL is not usable", 0
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	res, err := s.client.Do(req)
	if err != nil {
		return 0, describe(err), 0
	}
	// Drained (up to a bound) so the connection can be reused; never stored.
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return res.StatusCode, fmt.Sprintf("the endpoint answered %d", res.StatusCode), 0
	}
	return res.StatusCode, "", 0
}

// describe turns a transport error into a short, client-safe reason for the
// delivery log: the tenant sees it, so it names what happened, not our internals.
func describe(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, ErrAddressNotAllowed):
		return "refused: " + ErrAddressNotAllowed.Error()
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return fmt.Sprintf("no response within %s", AttemptTimeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before a response"
	case errors.As(err, &dnsErr):
		return "host could not be resolved"
	default:
		return "connection failed"
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
