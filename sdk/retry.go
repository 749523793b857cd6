package riskapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// permanentError marks an attempt failure that a retry cannot fix, such as a
// response body that is not the JSON the contract promises or an upload
// source that cannot be read. The retry loop returns the wrapped error.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// shouldRetry decides whether an attempt that ended with resp (a non-2xx
// response) or err (no usable response) should be retried, and gives the
// reason for logs and tests.
//
// The policy is the contract's: network errors, including a connection cut
// after the request was sent or while its response was being read, are
// retried, because the write is keyed and the server replays its stored
// outcome instead of running it twice. 409 (the same key still in progress),
// 429 (rate limited), 502, 503 and 504 (the server or its store unreachable)
// are retried. 500 is not: the server ran and failed, and will most likely
// fail again. 422 and every other 4xx mean the request itself is wrong.
func shouldRetry(resp *http.Response, err error) (bool, string) {
	if err != nil {
		var (
			pe  *permanentError
			cve *tls.CertificateVerificationError
			uae x509.UnknownAuthorityError
			hne x509.HostnameError
			cie x509.CertificateInvalidError
		)
		switch {
		case errors.As(err, &pe):
			return false, "permanent error: " + pe.err.Error()
		case errors.Is(err, context.Canceled):
			return false, "context canceled"
		case errors.As(err, &cve), errors.As(err, &uae), errors.As(err, &hne), errors.As(err, &cie):
			// A certificate does not fix itself between attempts.
			return false, "TLS certificate not trusted"
		case errors.Is(err, context.DeadlineExceeded):
			// An attempt timeout (http.Client.Timeout or
			// ResponseHeaderTimeout); the caller's own deadline is
			// checked before this function is consulted.
			return true, "attempt timed out"
		default:
			return true, "network error"
		}
	}
	if resp == nil {
		return false, "no response"
	}
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return false, "success"
	case code == http.StatusConflict:
		return true, "409: a request with this idempotency key is still in progress"
	case code == http.StatusTooManyRequests:
		return true, "429: rate limited"
	case code == http.StatusBadGateway, code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return true, fmt.Sprintf("%d: server temporarily unavailable", code)
	default:
		return false, fmt.Sprintf("%d is not retryable", code)
	}
}

// sleepTime returns the wait before retry number attempt (0 for the first
// retry). A Retry-After from the server (retryAfter > 0) is honoured exactly,
// up to MaxWait, because the server knows when its lease or rate window ends.
// Otherwise it is exponential backoff with full jitter: a uniformly random
// wait in [0, min(MaxWait, 500ms·2^attempt)), which spreads out clients that
// failed together instead of having them retry in lock-step.
func (c *Client) sleepTime(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, c.maxWait)
	}
	ceiling := c.maxWait
	if attempt >= 0 && attempt < 30 {
		if b := baseWait << attempt; b < ceiling {
			ceiling = b
		}
	}
	return c.jitter(ceiling)
}

// maxRetryAfter bounds a parsed Retry-After so that an absurd value cannot
// overflow time.Duration; MaxWait caps the actual wait far below it anyway.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After header value, either delay-seconds
// ("120") or an HTTP-date, relative to now. It returns 0 when the value is
// absent, malformed or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		// On overflow secs is the maximum, which the cap below absorbs.
		if secs > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}
