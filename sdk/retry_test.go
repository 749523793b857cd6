package riskapi

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestShouldRetry(t *testing.T) {
	netErr := &url.Error{Op: "Post", URL: "http://x/v2/risks", Err: io.EOF}
	tests := []struct {
		name      string
		status    int // 0: no response
		err       error
		wantRetry bool
	}{
		{"EOF after the request was sent", 0, netErr, true},
		{"unexpected EOF in the body", 0, fmt.Errorf("read response body: %w", io.ErrUnexpectedEOF), true},
		{"connection refused", 0, &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"attempt timeout", 0, &url.Error{Op: "Get", URL: "u", Err: context.DeadlineExceeded}, true},
		{"caller cancelled", 0, &url.Error{Op: "Get", URL: "u", Err: context.Canceled}, false},
		{"untrusted certificate", 0, &url.Error{Op: "Get", URL: "u", Err: x509.UnknownAuthorityError{}}, false},
		{"permanent", 0, &permanentError{errors.New("bad json")}, false},
		{"200", 200, nil, false},
		{"201", 201, nil, false},
		{"409", 409, nil, true},
		{"429", 429, nil, true},
		{"502", 502, nil, true},
		{"503", 503, nil, true},
		{"504", 504, nil, true},
		{"500", 500, nil, false},
		{"501", 501, nil, false},
		{"400", 400, nil, false},
		{"401", 401, nil, false},
		{"403", 403, nil, false},
		{"404", 404, nil, false},
		{"413", 413, nil, false},
		{"422", 422, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp *http.Response
			if tt.status != 0 {
				resp = &http.Response{StatusCode: tt.status}
			}
			retry, reason := shouldRetry(resp, tt.err)
			if retry != tt.wantRetry {
				t.Errorf("shouldRetry = %v (%s), want %v", retry, reason, tt.wantRetry)
			}
			if reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

func TestSleepTime(t *testing.T) {
	// jitter returns the top of its range (minus 1ns), making the ceiling visible.
	c := &Client{maxWait: 30 * time.Second, jitter: func(n time.Duration) time.Duration { return n - 1 }}
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{
		{0, 0, 500*time.Millisecond - 1},
		{1, 0, time.Second - 1},
		{2, 0, 2*time.Second - 1},
		{5, 0, 16*time.Second - 1},
		{6, 0, 30*time.Second - 1},  // 32 s capped at MaxWait
		{40, 0, 30*time.Second - 1}, // no overflow
		{0, 3 * time.Second, 3 * time.Second},
		{7, 3 * time.Second, 3 * time.Second}, // Retry-After wins over backoff
		{0, 5 * time.Minute, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := c.sleepTime(tt.attempt, tt.retryAfter); got != tt.want {
			t.Errorf("sleepTime(%d, %v) = %v, want %v", tt.attempt, tt.retryAfter, got, tt.want)
		}
	}

	// Full jitter: the real source spreads waits over [0, ceiling).
	c, err := NewClient("rk_a", WithMaxWait(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Duration]bool{}
	for range 200 {
		d := c.sleepTime(3, 0)
		if d < 0 || d >= 4*time.Second {
			t.Fatalf("sleepTime(3, 0) = %v, outside [0, 4s)", d)
		}
		seen[d] = true
	}
	if len(seen) < 100 {
		t.Errorf("only %d distinct waits in 200 draws: no jitter", len(seen))
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"5", 5 * time.Second},
		{" 12 ", 12 * time.Second},
		{"-3", 0},
		{"1.5", 0},
		{"soon", 0},
		{"99999999999999999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"Wed, 01 Jan 2025 12:00:30 GMT", 30 * time.Second},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestUploadFormLengthIsExact(t *testing.T) {
	for _, f := range []uploadForm{
		{boundary: "b0undary", filename: "a.pdf", contentType: "application/pdf"},
		{boundary: "xyz", filename: `quote " and \ backslash.txt`, contentType: "text/plain", description: "Email to the vendor — ünïcode"},
	} {
		for _, content := range []string{"", "x", strings.Repeat("0123456789", 10_000)} {
			var buf bytes.Buffer
			if err := f.write(&buf, strings.NewReader(content), int64(len(content))); err != nil {
				t.Fatal(err)
			}
			if got, want := f.length(int64(len(content))), int64(buf.Len()); got != want {
				t.Errorf("length(%d) = %d, written %d", len(content), got, want)
			}
		}
	}
}

func TestPageDecoding(t *testing.T) {
	tests := []struct {
		in         string
		wantLen    int
		wantMore   bool
		wantCursor string
	}{
		{`{"data":[{"id":"a"},{"id":"b"}],"hasMore":true,"nextCursor":"c2"}`, 2, true, "c2"},
		{`{"data":[{"id":"a"}],"hasMore":false,"nextCursor":null}`, 1, false, ""},
		{`{"data":[]}`, 0, false, ""},
		{` [{"id":"a"}]`, 1, false, ""},
	}
	for _, tt := range tests {
		var p Page[Attachment]
		if err := json.Unmarshal([]byte(tt.in), &p); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if len(p.Data) != tt.wantLen || p.HasMore != tt.wantMore || p.NextCursor != tt.wantCursor {
			t.Errorf("%s: got %d items, more=%v, cursor=%q", tt.in, len(p.Data), p.HasMore, p.NextCursor)
		}
	}
}

func TestPaginateGuardsAgainstEndlessPaging(t *testing.T) {
	pages := map[string]*Page[Risk]{
		"":   {Data: []*Risk{{ID: "1"}}, HasMore: true, NextCursor: "c1"},
		"c1": {Data: []*Risk{{ID: "2"}}, HasMore: true, NextCursor: "c2"},
		"c2": {Data: []*Risk{{ID: "3"}}, HasMore: true, NextCursor: "c1"}, // loops back
	}
	got, err := Collect(paginate(context.Background(), "", func(_ context.Context, cursor string) (*Page[Risk], error) {
		return pages[cursor], nil
	}))
	if len(got) != 3 || err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Errorf("looping cursor: %d items, %v", len(got), err)
	}

	got, err = Collect(paginate(context.Background(), "", func(context.Context, string) (*Page[Risk], error) {
		return &Page[Risk]{Data: []*Risk{{ID: "1"}}, HasMore: true}, nil
	}))
	if len(got) != 1 || err == nil || !strings.Contains(err.Error(), "nextCursor is empty") {
		t.Errorf("hasMore without cursor: %d items, %v", len(got), err)
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Status: 404, Code: "NOT_FOUND", Detail: "risk not found", RequestID: "req_1"}, "riskapi: 404 NOT_FOUND: risk not found (request req_1)"},
		{&Error{Status: 502, Title: "Bad Gateway"}, "riskapi: 502 Bad Gateway"},
		{&Error{}, "riskapi: error"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if (&Error{Code: "X"}).Is(&Error{}) || (&Error{Status: 404}).Is(errors.New("x")) {
		t.Error("Is matched a target without a code or status, or of another type")
	}
}

func TestSnippet(t *testing.T) {
	if got := snippet([]byte("  a\n\tb  \xff c ")); got != "a b c" {
		t.Errorf("snippet = %q", got)
	}
	long := snippet([]byte(strings.Repeat("é", 300)))
	if !strings.HasSuffix(long, "…") || len(long) > 205 || !strings.HasPrefix(long, "éé") {
		t.Errorf("long snippet = %q", long)
	}
}
