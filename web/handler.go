package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
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

// ClientRoutes are the app's own pages (web/src/app.tsx): each is answered with
// index.html, and the app picks the page from the path (the SPA fallback).
// They are listed rather than caught with "/*" so that every other path keeps
// the API's answers: 404 for an unknown path, 405 for a known one called with
// another method.
var ClientRoutes = []string{"/", "/risks/:id", "/requests", "/events", "/admin", "/admin/*"}

// RouteName names every route Routes registers, so that tools listing the
// API's routes (the OpenAPI coverage test) can leave the dashboard's out.
const RouteName = "web.dashboard"

type file struct {
	body        []byte
	etag        string
	contentType string
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
		h := c.Response().Header()
		setSecurityHeaders(h)
		h.Set("Cache-Control", cacheControl)
		h.Set("Content-Type", f.contentType)
		h.Set("ETag", f.etag)
		http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(f.body))
		return nil
	}
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
		out[name] = file{body: b, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, contentType: ct}
		return nil
	})
	return out, err
}
