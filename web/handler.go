package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// ContentSecurityPolicy is sent with every dashboard response: scripts, styles,
// images and connections from this origin only (so nothing from a CDN and no
// inline script), no plugins, no <base> tricks, forms post only here, and no
// framing (clickjacking), as X-Frame-Options: DENY says for older browsers.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ClientRoutes are the app's own pages (web/src/shell.tsx, named in web/src/title.ts;
// TestEveryPageOfTheAppIsServed keeps the two lists together): each is answered with
// index.html, and the app picks the page from the path (the SPA fallback).
// They are listed rather than caught with "/*" so that every other path keeps
// the API's answers: 405 for a known one called with another method, and 404
// for an unknown one — as a problem to API clients, under the API's prefixes
// and for assets, and as the app's own not-found page (index.html with status
// 404) to a browser loading any other page (notFound).
var ClientRoutes = []string{"/", "/risks/:id", "/my-work", "/requests", "/events", "/audit", "/trends", "/report",
	"/account/*", "/admin", "/admin/*"}

// apiPrefixes are the paths whose unknown GETs stay the API's 404 problem, never the app.
var apiPrefixes = []string{"/v1", "/v2", "/webhooks", "/healthz", "/readyz", "/metrics", "/assets/"}

// RouteName names every route Routes registers, so that tools listing the
// API's routes (the OpenAPI coverage test) can leave the dashboard's out.
const RouteName = "web.dashboard"

type file struct {
	body        []byte
	etag        string
	contentType string
	// gz is body gzip-compressed, made once at start-up; nil when that is not smaller.
	gz     []byte
	gzETag string
}

// Routes serves the dashboard on e: GET (and so HEAD) of the ClientRoutes
// answer index.html, and each file of the build is served at its own path,
// hashed assets with a year's caching.
func Routes(e *echo.Echo) error {
	files, err := load(Files())
	if err != nil {
		return err
	}
	index, ok := files["index.html"]
	if !ok {
		return fmt.Errorf("web: dist/index.html is missing; run npm run build in web/")
	}
	for _, p := range ClientRoutes {
		e.GET(p, serve(index, "no-cache")).Name = RouteName
	}
	e.Use(notFound(index))
	for name, f := range files {
		if name == "index.html" {
			continue
		}
		cache := "no-cache"
		if strings.HasPrefix(name, "assets/") {
			// Content-hashed names: a changed file gets a new name.
			cache = "public, max-age=31536000, immutable"
		}
		e.GET("/"+name, serve(f, cache)).Name = RouteName
	}
	return nil
}

func serve(f file, cacheControl string) echo.HandlerFunc {
	return func(c echo.Context) error {
		body, etag := f.variant(c.Response().Header(), c.Request(), cacheControl)
		c.Response().Header().Set("ETag", etag)
		http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(body))
		return nil
	}
}

// notFound answers a browser's GET of a path no route serves (Accept names
// text/html, as a page load does) with the app, status 404, which shows its
// own not-found page. It runs after routing, inside the server's middleware
// (request id, logs), and only where the router found nothing: a 405, other
// methods, API clients, the API's prefixes and assets keep the API's answers.
func notFound(index file) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !unrouted(c) ||
				underAPI(r.URL.Path) || !strings.Contains(r.Header.Get("Accept"), "text/html") {
				return next(c)
			}
			body, _ := index.variant(c.Response().Header(), r, "no-cache")
			return c.Blob(http.StatusNotFound, index.contentType, body)
		}
	}
}

func underAPI(p string) bool {
	for _, prefix := range apiPrefixes {
		if p == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(p, strings.TrimSuffix(prefix, "/")+"/") {
			return true
		}
	}
	return false
}

// unrouted reports whether the router found no route for the request (not a 405).
func unrouted(c echo.Context) bool {
	return reflect.ValueOf(c.Handler()).Pointer() == reflect.ValueOf(echo.NotFoundHandler).Pointer()
}

// variant sets the headers of f's answer to r and returns the bytes to send:
// gzip-compressed when r accepts gzip (RFC 9110 §12.5.3), with its own ETag.
func (f file) variant(h http.Header, r *http.Request, cacheControl string) ([]byte, string) {
	setSecurityHeaders(h)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Type", f.contentType)
	h.Add("Vary", "Accept-Encoding")
	if f.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		return f.gz, f.gzETag
	}
	return f.body, f.etag
}

// acceptsGzip reads an Accept-Encoding value: gzip with a q above 0, or else
// "*" with a q above 0 (an explicit gzip;q=0 refuses it whatever "*" says).
func acceptsGzip(v string) bool {
	gzipQ, anyQ := -1.0, -1.0
	for _, part := range strings.Split(v, ",") {
		coding, params, _ := strings.Cut(part, ";")
		q := 1.0
		if k, val, ok := strings.Cut(params, "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
				q = f
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			gzipQ = q
		case "*":
			anyQ = q
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// load reads every file of the build once, with its strong ETag (a hash of
// its bytes) and content type.
func load(fsys fs.FS) (map[string]file, error) {
	out := map[string]file{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		f := file{body: b, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, contentType: ct}
		if gz, err := compress(b); err == nil && len(gz) < len(b) {
			f.gz, f.gzETag = gz, `"`+hex.EncodeToString(sum[:16])+`-gzip"`
		}
		out[name] = f
		return nil
	})
	return out, err
}

// compress gzips b at the best compression: done once per file at start-up.
func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
