package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// newServer is an Echo with one API route beside the dashboard, as the real
// server has many.
func newServer(t *testing.T) *echo.Echo {
	t.Helper()
	e := echo.New()
	e.GET("/v1/risks", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]any{"data": []any{}}) })
	if err := Routes(e); err != nil {
		t.Fatal(err)
	}
	return e
}

func do(e *echo.Echo, method, target string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func TestDashboardIsServedWithAStrictPolicy(t *testing.T) {
	e := newServer(t)
	for _, path := range []string{"/", "/risks/risk_123", "/admin/users", "/requests?idempotencyKey=abc", "/audit?action=risk.updated"} {
		rec := do(e, http.MethodGet, path)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %q, want the app's HTML", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		if !strings.Contains(rec.Body.String(), `<div id="app">`) {
			t.Errorf("GET %s: body is not index.html", path)
		}
		h := rec.Header()
		for name, want := range map[string]string{
			"Content-Security-Policy": ContentSecurityPolicy,
			"X-Frame-Options":         "DENY",
			"X-Content-Type-Options":  "nosniff",
			"Cache-Control":           "no-cache",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, name, got, want)
			}
		}
	}
	for _, directive := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(ContentSecurityPolicy, directive) {
			t.Errorf("policy lacks %q", directive)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe-") {
		t.Errorf("policy allows unsafe sources: %s", ContentSecurityPolicy)
	}
}

// Every page the app names (web/src/title.ts, PAGES) loads with 200 on a full page
// load — a reload, a bookmark — not the not-found page's 404 (/my-work, /trends and
// /report once did).
func TestEveryPageOfTheAppIsServed(t *testing.T) {
	src, err := os.ReadFile("src/title.ts")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const PAGES[^{]*\{(.*?)\};`).FindSubmatch(src)
	if block == nil {
		t.Fatal("no PAGES in src/title.ts")
	}
	paths := regexp.MustCompile(`"(/[^"]*)":`).FindAllSubmatch(block[1], -1)
	if len(paths) < 5 {
		t.Fatalf("PAGES names %d pages, read wrongly", len(paths))
	}
	e := newServer(t)
	for _, m := range paths {
		if rec := do(e, http.MethodGet, string(m[1])); rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200 (add it to ClientRoutes)", m[1], rec.Code)
		}
	}
}

// The policy forbids inline script, so the build must have none, and load
// nothing from another origin.
func TestBuildHasNoInlineScriptAndNothingFromElsewhere(t *testing.T) {
	index, err := fs.ReadFile(Files(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(string(index), -1) {
		if !strings.Contains(tag, `src="/`) {
			t.Errorf("inline or foreign script: %s", tag)
		}
	}
	for _, ref := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(index), -1) {
		if !strings.HasPrefix(ref[1], "/") || strings.HasPrefix(ref[1], "//") {
			t.Errorf("reference to another origin: %s", ref[1])
		}
	}
}

// The service worker (src/sw/sw.ts) must come from the root, so that its scope is
// the whole app, as a script under the same policy, and never from a cache that
// outlives a release: each release's worker lists that release's files.
func TestServiceWorkerIsServedFromTheRoot(t *testing.T) {
	e := newServer(t)
	rec := do(e, http.MethodGet, "/sw.js")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), "javascript") {
		t.Fatalf("GET /sw.js: %d %q, want the worker's script", rec.Code, rec.Header().Get("Content-Type"))
	}
	for name, want := range map[string]string{"Cache-Control": "no-cache", "Content-Security-Policy": ContentSecurityPolicy} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("GET /sw.js: %s = %q, want %q", name, got, want)
		}
	}
	body := rec.Body.String()
	if strings.Contains(body, "__RISKAPI_") || strings.Contains(body, "export {") || strings.Contains(body, "import ") {
		t.Errorf("sw.js is not a finished classic script (a placeholder or a module statement is left in it)")
	}
	err := fs.WalkDir(Files(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || name == "index.html" || name == "sw.js" {
			return err
		}
		if !strings.Contains(body, `"/`+name+`"`) {
			t.Errorf("sw.js does not store /%s: the page that needs it would not open offline", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAssetsAreCachedByTheirHashedName(t *testing.T) {
	e := newServer(t)
	assets, err := fs.Glob(Files(), "assets/*.js")
	if err != nil || len(assets) == 0 {
		t.Fatalf("no built script in dist/assets (%v)", err)
	}
	rec := do(e, http.MethodGet, "/"+assets[0])
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), "javascript") {
		t.Fatalf("GET %s: %d %q", assets[0], rec.Code, rec.Header().Get("Content-Type"))
	}
	if got := rec.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
		t.Errorf("Cache-Control = %q", got)
	}
	etag := rec.Header().Get("ETag")
	if again := do(e, http.MethodGet, "/"+assets[0], "If-None-Match", etag); again.Code != http.StatusNotModified {
		t.Errorf("If-None-Match %s: %d, want 304", etag, again.Code)
	}
	if miss := do(e, http.MethodGet, "/assets/index-missing.js"); miss.Code != http.StatusNotFound {
		t.Errorf("missing asset: %d, want 404 (not the HTML)", miss.Code)
	}
}

func TestAPIPathsAreNeverTheDashboard(t *testing.T) {
	e := newServer(t)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/v1/no-such-thing", http.StatusNotFound},
		{http.MethodGet, "/v2/risks", http.StatusNotFound},
		{http.MethodGet, "/v1", http.StatusNotFound},
		{http.MethodGet, "/no-such-page", http.StatusNotFound},
		{http.MethodGet, "/webhooks/inbound/x", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/v1/risks", http.StatusMethodNotAllowed},
		{http.MethodGet, "/v1/risks", http.StatusOK},
	} {
		rec := do(e, tc.method, tc.path)
		if rec.Code != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.want)
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s %s: answered with the dashboard", tc.method, tc.path)
		}
	}
}

// An unknown page is the app's own not-found page (index.html, 404), not the API's JSON.
func TestUnknownPagesAreTheAppsNotFoundPage(t *testing.T) {
	e := newServer(t)
	for _, path := range []string{"/no-such-page", "/admins", "/account/password"} {
		rec := do(e, http.MethodGet, path, "Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		want := http.StatusNotFound
		if path == "/account/password" {
			want = http.StatusOK
		}
		if rec.Code != want || !strings.Contains(rec.Body.String(), `<div id="app">`) {
			t.Errorf("GET %s: %d, want %d with the app", path, rec.Code, want)
		}
		if rec.Header().Get("Content-Security-Policy") != ContentSecurityPolicy {
			t.Errorf("GET %s: no policy on the not-found page", path)
		}
	}
	// Not for API clients, other methods, the API's paths or assets.
	for _, tc := range [][]string{
		{http.MethodGet, "/no-such-page", "application/json"},
		{http.MethodPost, "/no-such-page", "text/html"},
		{http.MethodGet, "/v1/no-such-thing", "text/html"},
		{http.MethodGet, "/assets/index-missing.js", "text/html"},
	} {
		if rec := do(e, tc[0], tc[1], "Accept", tc[2]); rec.Code != http.StatusNotFound || strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s %s (Accept %s): %d %q, want the API's 404", tc[0], tc[1], tc[2], rec.Code, rec.Header().Get("Content-Type"))
		}
	}
}

func TestAssetsAreSentCompressedWhenAccepted(t *testing.T) {
	e := newServer(t)
	assets, err := fs.Glob(Files(), "assets/*.js")
	if err != nil || len(assets) == 0 {
		t.Fatalf("no built script in dist/assets (%v)", err)
	}
	// The largest script (the first load's): the build also has small lazy
	// chunks, which compress less than half.
	var raw []byte
	for _, a := range assets {
		if b, _ := fs.ReadFile(Files(), a); len(b) > len(raw) {
			raw, assets[0] = b, a
		}
	}
	for _, tc := range []struct {
		accept string
		gzip   bool
	}{
		{"gzip, deflate, br, zstd", true},
		{"br;q=1.0, gzip;q=0.8", true},
		{"*", true},
		{"", false},
		{"identity", false},
		{"gzip;q=0", false},
		{"gzip;q=0, *", false},
	} {
		rec := do(e, http.MethodGet, "/"+assets[0], "Accept-Encoding", tc.accept)
		h := rec.Header()
		if !strings.Contains(h.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: Vary = %q", tc.accept, h.Get("Vary"))
		}
		body := rec.Body.Bytes()
		if got := h.Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Fatalf("Accept-Encoding %q: Content-Encoding = %q", tc.accept, h.Get("Content-Encoding"))
		}
		if tc.gzip {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
			if rec.Body.Len()*2 > len(raw) {
				t.Errorf("compressed %d of %d bytes: less than half expected", rec.Body.Len(), len(raw))
			}
		}
		if !bytes.Equal(body, raw) {
			t.Errorf("Accept-Encoding %q: the bytes differ from the build", tc.accept)
		}
		if h.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("Accept-Encoding %q: Cache-Control = %q", tc.accept, h.Get("Cache-Control"))
		}
	}
	// The two encodings have their own ETags, so a cache never mixes them up.
	plain := do(e, http.MethodGet, "/"+assets[0]).Header().Get("ETag")
	zipped := do(e, http.MethodGet, "/"+assets[0], "Accept-Encoding", "gzip")
	if plain == zipped.Header().Get("ETag") {
		t.Errorf("one ETag %s for both encodings", plain)
	}
	if again := do(e, http.MethodGet, "/"+assets[0], "Accept-Encoding", "gzip", "If-None-Match", zipped.Header().Get("ETag")); again.Code != http.StatusNotModified {
		t.Errorf("If-None-Match of the gzip ETag: %d, want 304", again.Code)
	}
}
