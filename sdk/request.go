package riskapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
)

// request describes one API call; call turns it into one HTTP request per
// attempt.
type request struct {
	method string
	// path is the escaped path below the base URL, e.g. "/v2/risks/risk_1".
	path   string
	query  url.Values
	params *Params // nil: no request options
	// accept is the Accept header; empty means JSON.
	accept string
	// contentType is the Content-Type of the body; fixed for the call so
	// that every attempt sends the same bytes.
	contentType string
	// body, when non-nil, gives a fresh body for each attempt: its length
	// (-1 if unknown) and a finish func, called once the attempt's
	// exchange is over, that releases the body and reports an error of the
	// body's source (which no retry can fix). finish may be nil.
	body func() (rc io.ReadCloser, length int64, finish func() error, err error)
}

// isWrite reports whether method changes state and so carries an
// Idempotency-Key (docs/idempotency.md).
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// call performs r with the retry policy (see shouldRetry and sleepTime) and
// hands the first 2xx response to handle along with its APIResponse. handle
// owns the response body. An error handle returns while reading the body is
// treated as a network error and retried, since the connection broke off
// mid-answer; wrap it in *permanentError to stop instead.
//
// It returns the *Error of the last non-2xx attempt, or the last network
// error wrapped with the number of attempts; if ctx ends first, an error
// wrapping ctx.Err() (and the last attempt's error, if any).
func (c *Client) call(ctx context.Context, r *request, handle func(*http.Response, *APIResponse) error) error {
	if r.params != nil {
		if err := checkHeaders(r.params.Headers); err != nil {
			return err
		}
	}
	var key string
	if isWrite(r.method) {
		if r.params != nil {
			key = r.params.IdempotencyKey
		}
		if key == "" {
			// Minted once per call, before the first attempt, so
			// that every retry presents the same key.
			key = uuid.NewString()
		}
	}
	start := c.now()
	var lastErr error
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, r, key, attempt)
		if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
			err = handle(resp, newAPIResponse(resp, key, attempt))
			if err == nil {
				return nil
			}
			resp = nil
		}
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return c.canceled(ctx, r, err, lastErr)
		}
		retry, reason := shouldRetry(resp, err)
		var retryAfter time.Duration
		if resp != nil {
			apiErr := newError(resp, key, c.now())
			resp.Body.Close()
			retryAfter = apiErr.RetryAfter
			lastErr = apiErr
		} else {
			lastErr = err
		}
		if !retry {
			return finalError(r, attempt, lastErr)
		}
		if attempt > c.maxRetries {
			c.logger.LogAttrs(ctx, slog.LevelInfo, "riskapi: giving up: retries exhausted",
				logAttrs(r, key, attempt, reason, lastErr)...)
			return finalError(r, attempt, lastErr)
		}
		wait := c.sleepTime(attempt-1, retryAfter)
		if c.now().Sub(start)+wait > c.maxElapsed {
			c.logger.LogAttrs(ctx, slog.LevelInfo, "riskapi: giving up: time budget spent",
				append(logAttrs(r, key, attempt, reason, lastErr), slog.Duration("maxElapsed", c.maxElapsed))...)
			return finalError(r, attempt, lastErr)
		}
		c.logger.LogAttrs(ctx, slog.LevelInfo, "riskapi: retrying",
			append(logAttrs(r, key, attempt, reason, lastErr), slog.Duration("wait", wait))...)
		if err := c.sleep(ctx, wait); err != nil {
			return c.canceled(ctx, r, err, lastErr)
		}
	}
}

func logAttrs(r *request, key string, attempt int, reason string, err error) []slog.Attr {
	return []slog.Attr{
		slog.String("method", r.method),
		slog.String("path", r.path),
		slog.String("idempotencyKey", key),
		slog.Int("attempt", attempt),
		slog.String("reason", reason),
		slog.Any("error", err),
	}
}

// finalError shapes the error a call returns: an *Error as it is, so that
// err.(*riskapi.Error) works as well as errors.As; anything else wrapped with
// the call and its number of attempts.
func finalError(r *request, attempts int, err error) error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	var pe *permanentError
	if errors.As(err, &pe) {
		err = pe.err
	}
	if attempts == 1 {
		return fmt.Errorf("riskapi: %s %s: %w", r.method, r.path, err)
	}
	return fmt.Errorf("riskapi: %s %s: giving up after %d attempts: %w", r.method, r.path, attempts, err)
}

// canceled is the error of a call whose context ended: it wraps both the
// context's error (for errors.Is(err, context.Canceled)) and the last attempt's
// error, if any (for errors.As(err, &apiErr)).
func (c *Client) canceled(ctx context.Context, r *request, attemptErr, lastErr error) error {
	cause := ctx.Err()
	if cause == nil {
		cause = attemptErr // the sleep func reported an error of its own
	}
	if lastErr == nil {
		return fmt.Errorf("riskapi: %s %s: %w", r.method, r.path, cause)
	}
	return fmt.Errorf("riskapi: %s %s: %w (last attempt: %w)", r.method, r.path, cause, lastErr)
}

// send makes one attempt: it builds a fresh *http.Request (a body cannot be
// sent twice) carrying the call's idempotency key and performs it.
func (c *Client) send(ctx context.Context, r *request, key string, attempt int) (*http.Response, error) {
	target := c.baseURL.String() + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	var (
		body   io.ReadCloser
		length int64
		finish func() error
	)
	if r.body != nil {
		var err error
		body, length, finish, err = r.body()
		if err != nil {
			return nil, &permanentError{err}
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		if finish != nil {
			finish()
		}
		return nil, &permanentError{err}
	}
	if body != nil {
		req.ContentLength = length
		if length == 0 {
			body.Close()
			req.Body = http.NoBody
		}
	}
	if r.params != nil {
		for name, values := range r.params.Headers {
			if isManagedHeader(name) {
				continue
			}
			for _, v := range values {
				req.Header.Add(name, v)
			}
		}
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Riskapi-Version", APIVersion)
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if r.contentType != "" && body != nil {
		req.Header.Set("Content-Type", r.contentType)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if r.params != nil && r.params.IfMatch != "" && isWrite(r.method) {
		req.Header.Set("If-Match", r.params.IfMatch)
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "riskapi: request",
		slog.String("method", r.method), slog.String("path", r.path),
		slog.String("idempotencyKey", key), slog.Int("attempt", attempt))

	resp, err := c.httpClient.Do(req)
	if finish != nil {
		if ferr := finish(); ferr != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, &permanentError{ferr}
		}
	}
	if err != nil {
		return nil, err
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "riskapi: response",
		slog.String("method", r.method), slog.String("path", r.path),
		slog.Int("status", resp.StatusCode), slog.String("requestId", resp.Header.Get("X-Request-Id")),
		slog.Int("attempt", attempt))
	return resp, nil
}

// doJSON performs a call whose request body, if in is non-nil, is in marshalled as JSON
// and whose 2xx response body, if out is non-nil and the status is not 204,
// is decoded into out.
func (c *Client) doJSON(ctx context.Context, method, path string, query url.Values, params *Params, in, out any) (*APIResponse, error) {
	r := &request{method: method, path: path, query: query, params: params}
	if in != nil {
		// Marshalled once: every attempt sends identical bytes, which
		// the server's fingerprint requires for a replay.
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("riskapi: %s %s: encode request: %w", method, path, err)
		}
		r.contentType = "application/json"
		r.body = func() (io.ReadCloser, int64, func() error, error) {
			return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil, nil
		}
	}
	var info *APIResponse
	err := c.call(ctx, r, func(resp *http.Response, ri *APIResponse) error {
		info = ri
		return decodeBody(resp, out)
	})
	return info, err
}

// decodeBody reads a 2xx body whole and, unless out is nil or the status is
// 204, decodes it into out; it closes the body. A read error is returned
// as is, so that call retries it (the connection broke off mid-answer); a
// decoding error is permanent, since the same bytes would come back.
func decodeBody(resp *http.Response, out any) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read response body: %w", err)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return &permanentError{fmt.Errorf("decode %d response: %w", resp.StatusCode, err)}
	}
	return nil
}
