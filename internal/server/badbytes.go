package server

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// readHeaders are the request headers some route reads as text (Cookie only under
// /v1, cookieRead: /v2 never reads a cookie). The others are
// ignored, made printable where they are kept (User-Agent, X-Request-Id) or checked
// against a stricter syntax of their own (Idempotency-Key: IDEMPOTENCY_KEY_INVALID).
var readHeaders = []string{
	echo.HeaderAuthorization, echo.HeaderCookie, echo.HeaderContentType,
	"If-Match", "If-None-Match", auth.AuthorHeader,
	"webhook-id", "webhook-timestamp", webhooks.SignatureHeader,
}

// refuseBadBytes answers 400 VALIDATION_FAILED, naming each offender, a request with
// a NUL byte or invalid UTF-8 in its path (named by the route's parameter that holds
// it: an id no object can have, which a keyed write would otherwise record with its
// idempotency key), in a query parameter's name or value or in a header riskapi
// reads (docs/errors.md): PostgreSQL text refuses both (SQLSTATE 22021) and
// SQLite would store or search them as they came, so they are refused at the edge,
// the same on either store, before any route looks at them. JSON bodies get the
// same check as they are decoded (jsonbody); net/http already refuses a NUL in any
// header.
func refuseBadBytes(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		var bad []problem.FieldError
		if !cleanText(req.URL.Path) {
			bad = append(bad, problem.FieldError{Field: badPathParam(c), Detail: badBytesDetail("path parameter")})
		}
		if req.URL.RawQuery != "" {
			if detail := unparsedQuery(req.URL.RawQuery); detail != "" {
				bad = append(bad, problem.FieldError{Field: "query", Detail: detail})
			}
			params := c.QueryParams()
			for _, name := range slices.Sorted(maps.Keys(params)) {
				if !cleanText(name) {
					bad = append(bad, problem.FieldError{Field: printable(name, 100), Detail: badBytesDetail("parameter name")})
					continue
				}
				for _, v := range params[name] {
					if !cleanText(v) {
						bad = append(bad, problem.FieldError{Field: name, Detail: badBytesDetail("value")})
						break
					}
				}
			}
		}
		for _, h := range readHeaders {
			if h == echo.HeaderCookie && !cookieRead(req.URL.Path) {
				continue
			}
			for _, v := range req.Header.Values(h) {
				if !cleanText(v) {
					bad = append(bad, problem.FieldError{Field: h, Detail: badBytesDetail("header value")})
					break
				}
			}
		}
		if len(bad) > 0 {
			return problem.Fields(bad)
		}
		return next(c)
	}
}

// unparsedQuery says why a raw query string is not name=value pairs joined by
// "&", each percent-encoded, or "" when it is. net/url drops such a pair without
// a word (`status=closed;x` would list every risk, `sta%tus=1` would filter
// nothing), so a client would act on more than it asked for.
func unparsedQuery(raw string) string {
	// Only a ";" or a "%" can fail to parse: most queries are not parsed twice.
	if !strings.ContainsAny(raw, ";%") {
		return ""
	}
	if _, err := url.ParseQuery(raw); err == nil {
		return ""
	}
	if strings.Contains(raw, ";") {
		return "the query string must join its parameters with \"&\": \";\" is not a separator (percent-encode it as %3B in a value)"
	}
	return "the query string holds a \"%\" not followed by two hexadecimal digits (percent-encode it as %25)"
}

// badPathParam names the route's path parameter whose value is not clean text, or
// "path" when none does (a path no route matched).
func badPathParam(c echo.Context) string {
	values := c.ParamValues()
	for i, name := range c.ParamNames() {
		if i >= len(values) {
			break
		}
		v, err := url.PathUnescape(values[i])
		if err != nil || !cleanText(v) || !cleanText(values[i]) {
			return name
		}
	}
	return "path"
}

// cookieRead reports whether a request to path may read the session cookie: only
// /v1 authenticates by session (/v2 by API key alone, the rest by nothing).
func cookieRead(path string) bool { return path == "/v1" || strings.HasPrefix(path, "/v1/") }

// cleanText reports whether s is valid UTF-8 without NUL.
func cleanText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

func badBytesDetail(what string) string {
	return "the " + what + " must be valid UTF-8 without the NUL character"
}
