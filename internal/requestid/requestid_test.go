package requestid_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/requestid"
)

// TestOneIDEverywhere: the id in the response header is the one in the context, and
// a line logged with that context carries it; a line logged without does not.
func TestOneIDEverywhere(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(requestid.LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	e := echo.New()
	var inCtx string
	e.GET("/", func(c echo.Context) error {
		inCtx = requestid.From(c.Request().Context())
		log.InfoContext(c.Request().Context(), "inside")
		log.Info("outside")
		return nil
	}, requestid.Middleware())
	for _, sent := range []string{"", "client-id.1", "bad id\nforged=1"} {
		buf.Reset()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if sent != "" {
			req.Header.Set(echo.HeaderXRequestID, sent)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		hdr := rec.Header().Get(echo.HeaderXRequestID)
		if hdr == "" || hdr != inCtx {
			t.Errorf("sent %q: header %q, context %q; want equal and set", sent, hdr, inCtx)
		}
		if (sent == "client-id.1") != (hdr == sent) {
			t.Errorf("sent %q: got %q; a well-formed id is kept, any other replaced", sent, hdr)
		}
		dec := json.NewDecoder(&buf)
		for _, want := range []any{hdr, nil} {
			var line map[string]any
			if err := dec.Decode(&line); err != nil {
				t.Fatal(err)
			}
			if line["requestId"] != want {
				t.Errorf("sent %q: log line %v, want requestId %v", sent, line, want)
			}
		}
	}
	if requestid.From(context.Background()) != "" {
		t.Errorf("a context outside a request has an id")
	}
}

// TestMintedIDsAreOrderedByTime: a minted id is "req_" and 32 hex digits, and each
// sorts after the one minted before it, so the request log's index on request ids
// takes new ones at its end (docs/requests.md).
func TestMintedIDsAreOrderedByTime(t *testing.T) {
	t.Parallel()
	e := echo.New()
	e.GET("/", func(c echo.Context) error { return nil }, requestid.Middleware())
	shape := regexp.MustCompile(`^req_[0-9a-f]{32}$`)
	prev := ""
	for range 1000 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		id := rec.Header().Get(echo.HeaderXRequestID)
		if !shape.MatchString(id) {
			t.Fatalf("minted %q, want req_ and 32 hex digits", id)
		}
		if id <= prev {
			t.Fatalf("minted %q after %q: not ordered by time", id, prev)
		}
		prev = id
	}
}
