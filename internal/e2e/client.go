package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Client speaks riskapi's /v2 over raw net/http, one attempt per call, so that the
// caller accounts for every answer and owns the retry policy.
type Client struct {
	APIKey string
	HTTP   *http.Client
	// Timeout bounds one attempt. Optional. Default 30s.
	Timeout time.Duration
}

// NewClient returns a Client for apiKey whose transport keeps up to conns idle
// connections per instance.
func NewClient(apiKey string, conns int) *Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4 * conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	return &Client{APIKey: apiKey, HTTP: &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Close drops the idle connections.
func (c *Client) Close() { c.HTTP.CloseIdleConnections() }

// Answer is the outcome of one attempt: a network error, or a response.
type Answer struct {
	Err      error // network error (connection refused or cut, timeout); no response
	Status   int
	Body     []byte
	Replayed string // Idempotent-Replayed header: "true", "false" or ""
	Code     string // problem+json "code" of an error response
	// Outcome is the problem's "outcome" member (503 STORE_UNAVAILABLE:
	// "not_executed" or "unknown").
	Outcome    string
	RetryAfter string // the Retry-After header
	Sent       time.Time
	Latency    time.Duration
}

func (a Answer) String() string {
	if a.Err != nil {
		return "network error: " + a.Err.Error()
	}
	b := a.Body
	if len(b) > 300 {
		b = b[:300]
	}
	return fmt.Sprintf("%d %s %s", a.Status, a.Code, b)
}

// Do sends one request to base+path with an optional JSON body and Idempotency-Key.
func (c *Client) Do(ctx context.Context, method, base, path, key string, body []byte) Answer {
	var h http.Header
	if key != "" {
		h = http.Header{"Idempotency-Key": {key}}
	}
	return c.Send(ctx, method, base, path, h, body)
}

// Send is Do with any request headers (Idempotency-Key, If-Match, …) in h.
func (c *Client) Send(ctx context.Context, method, base, path string, h http.Header, body []byte) Answer {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	a := Answer{Sent: time.Now()}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		a.Err = err
		return a
	}
	// Without GetBody net/http cannot resend the request on its own: every attempt
	// is one the caller sees and accounts for (a keyed POST counts as idempotent, and
	// the transport would otherwise retry some cut connections silently).
	req.GetBody = nil
	req.Header.Set("Authorization", "Bearer "+c.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range h {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	res, err := c.HTTP.Do(req)
	if err == nil {
		a.Body, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	a.Latency = time.Since(a.Sent)
	if err != nil {
		a.Err = err // a body cut mid-way counts as a lost answer too
		a.Body = nil
		return a
	}
	a.Status = res.StatusCode
	a.Replayed = res.Header.Get("Idempotent-Replayed")
	a.RetryAfter = res.Header.Get("Retry-After")
	if a.Status >= 400 {
		var p struct {
			Code    string `json:"code"`
			Outcome string `json:"outcome"`
		}
		if json.Unmarshal(a.Body, &p) == nil {
			a.Code, a.Outcome = p.Code, p.Outcome
		}
	}
	return a
}

// CreateRisk posts body to /v2/risks with key (none if empty).
func (c *Client) CreateRisk(ctx context.Context, base, key string, body []byte) Answer {
	return c.Do(ctx, http.MethodPost, base, "/v2/risks", key, body)
}

// Risk is the part of a risk the checks read.
type Risk struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// RiskID returns the "id" of a risk response body.
func RiskID(body []byte) (string, error) {
	var r Risk
	if err := json.Unmarshal(body, &r); err != nil || r.ID == "" {
		return "", fmt.Errorf("not a risk: %.200q", body)
	}
	return r.ID, nil
}

// ListRisks reads every risk of the key's tenant, page by page (limit 100), with up
// to maxPages pages, retrying each page a few times on network errors.
func (c *Client) ListRisks(ctx context.Context, base string, maxPages int) ([]Risk, error) {
	var all []Risk
	cursor := ""
	for page := 0; page < maxPages; page++ {
		path := "/v2/risks?limit=100"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var a Answer
		for try := 0; try < 5; try++ {
			if a = c.Do(ctx, http.MethodGet, base, path, "", nil); a.Err == nil && a.Status != http.StatusServiceUnavailable {
				break
			}
			if err := sleep(ctx, 200*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if a.Err != nil || a.Status != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", path, a)
		}
		var p struct {
			Data       []Risk  `json:"data"`
			HasMore    bool    `json:"hasMore"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(a.Body, &p); err != nil {
			return nil, fmt.Errorf("GET %s: %v", path, err)
		}
		all = append(all, p.Data...)
		if !p.HasMore {
			return all, nil
		}
		if p.NextCursor == nil || *p.NextCursor == "" {
			return nil, fmt.Errorf("GET %s: hasMore without nextCursor", path)
		}
		cursor = *p.NextCursor
	}
	return nil, fmt.Errorf("list risks: more than %d pages", maxPages)
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Summary describes a set of latencies.
type Summary struct {
	N                        int
	Mean, P50, P95, P99, Max time.Duration
}

// Summarize sorts a copy of ds and returns its summary (nearest-rank percentiles).
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Summary{N: len(s), Mean: sum / time.Duration(len(s)), P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: s[len(s)-1]}
}

func (s Summary) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("n=%d p50=%s p95=%s p99=%s max=%s mean=%s", s.N, ms(s.P50), ms(s.P95), ms(s.P99), ms(s.Max), ms(s.Mean))
}
