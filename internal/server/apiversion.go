package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// The edge of API versions (docs/api-versions.md): which version a request is in,
// and its translation to and from the newest, the only one handlers, stores and
// views speak.

// namedVersion reads the Riskapi-Version header of a /v1 or /v2 request before
// anything else: an unknown value is 400 API_VERSION_UNKNOWN; a known one is the
// request's version, answered in the response's header. A request that names none is
// given its tenant's pin by pinnedVersion, once authenticated (or the newest on a
// route without a credential).
func namedVersion(authenticated bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if named := c.Request().Header.Values(apiversion.Header); len(named) > 1 {
				// Not the first one: a proxy or a client's defaults added one, and
				// which was meant is the client's to say (docs/errors.md).
				return problem.New(problem.APIVersionUnknown, "Riskapi-Version: %d headers name versions; send one", len(named))
			}
			text := c.Request().Header.Get(apiversion.Header)
			if text == "" {
				if !authenticated {
					setVersion(c, apiversion.API.Newest())
				}
				return next(c)
			}
			v, err := apiversion.API.Parse(strings.TrimSpace(text))
			if err != nil {
				return problem.New(problem.APIVersionUnknown, "Riskapi-Version: no API version is named %q; the versions are %s (docs/api-versions.md)",
					text, strings.Join(versionNames(), ", "))
			}
			setVersion(c, v)
			return next(c)
		}
	}
}

// pinnedVersion gives a request that named no version its tenant's pin, read with
// its credential (auth.Principal.APIVersion).
func pinnedVersion(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, ok := apiversion.Of(c.Request().Context()); ok {
			return next(c)
		}
		v := apiversion.API.Newest()
		if p := auth.FromContext(c.Request().Context()); p != nil {
			if pin, err := apiversion.API.Parse(p.APIVersion); err == nil {
				v = pin
			}
		}
		setVersion(c, v)
		return next(c)
	}
}

// answeredVersion gives every /v1 and /v2 answer a Riskapi-Version, also those no
// route's chain version: the router's 404, a 401 before the tenant (and so its pin)
// is known. Those are in the version the request named, else the newest; a
// request refused for its version names none.
func answeredVersion(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := c.Request().URL.Path
		if !strings.HasPrefix(p, "/v1/") && !strings.HasPrefix(p, "/v2/") && p != "/v1" && p != "/v2" {
			return next(c)
		}
		switch named := c.Request().Header.Values(apiversion.Header); len(named) {
		case 0:
			c.Response().Header().Set(apiversion.Header, string(apiversion.API.Newest()))
		case 1:
			if v, err := apiversion.API.Parse(strings.TrimSpace(named[0])); err == nil {
				c.Response().Header().Set(apiversion.Header, string(v))
			}
		}
		// (a refused version names none)
		return next(c)
	}
}

func setVersion(c echo.Context, v apiversion.Version) {
	c.Response().Header().Set(apiversion.Header, string(v))
	c.SetRequest(c.Request().WithContext(apiversion.With(c.Request().Context(), v)))
}

func versionNames() []string {
	var out []string
	for _, v := range apiversion.API.Versions() {
		out = append(out, string(v))
	}
	return out
}

// translate reads a JSON request body of resource written in the request's version
// as the newest, and answers in that version what the handler wrote in the newest:
// the innermost middleware, after idempotency, so that the fingerprint is of what the
// client sent and a replay answers the bytes first sent. A request in the newest
// version passes untouched.
func translate(resource string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			v, ok := apiversion.Of(c.Request().Context())
			if !ok || !apiversion.API.Touches(v, resource) {
				return next(c)
			}
			if err := translateRequest(c.Request(), v, resource); err != nil {
				return err
			}
			res := c.Response()
			orig := res.Writer
			held := answerBuffers.Get().(*[]byte)
			buf := &bufferedAnswer{header: orig.Header(), body: bytes.NewBuffer(*held), orig: orig, version: v, resource: resource}
			defer func() { buf.body.Reset(); keepBuffer(held, buf.body.Bytes()) }()
			res.Writer = buf
			err := next(c)
			res.Writer = orig
			if err != nil {
				return translateProblem(err, v, resource)
			}
			if buf.status == 0 || buf.streamed || buf.passed {
				return buf.flushLine()
			}
			body := buf.body.Bytes()
			if buf.body.Len() > 0 && strings.HasPrefix(orig.Header().Get(echo.HeaderContentType), echo.MIMEApplicationJSON) {
				rendered := answerBuffers.Get().(*[]byte)
				out, terr := apiversion.API.AppendResponseBody(*rendered, v, resource, body)
				defer keepBuffer(rendered, out)
				if terr != nil {
					return terr
				}
				if bytes.HasSuffix(body, []byte("\n")) {
					out = append(out, '\n')
				}
				body = out
			}
			orig.WriteHeader(buf.status)
			if len(body) == 0 {
				return nil
			}
			_, werr := orig.Write(body)
			return werr
		}
	}
}

// translateRequest replaces a JSON body by its translation. A body that is no JSON
// object the JSON API would read is left for the handler to refuse as it would in
// the newest version.
func translateRequest(req *http.Request, v apiversion.Version, resource string) error {
	if req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodDelete || !jsonbody.IsJSON(req) {
		return nil
	}
	data, err := reqbody.Read(req, 0)
	if err != nil || len(data) == 0 {
		return nil
	}
	var strict map[string]any
	if jsonbody.Unmarshal(data, &strict) != nil {
		return nil
	}
	out, err := apiversion.API.RequestBody(v, resource, data)
	var shape *apiversion.ShapeError
	if errors.As(err, &shape) {
		return problem.Invalid(shape.Field, shape.Detail+" in API version "+string(v))
	}
	if err != nil {
		return err
	}
	reqbody.Replace(req, out)
	return nil
}

// translateProblem renders a 412's current risk in the request's version.
func translateProblem(err error, v apiversion.Version, resource string) error {
	p := problem.As(err)
	if p == nil || p.Current == nil {
		return err
	}
	b, merr := json.Marshal(p.Current)
	if merr != nil {
		return err
	}
	out, terr := apiversion.API.ResponseBody(v, resource, b)
	if terr != nil {
		return err
	}
	q := *p
	q.Current = json.RawMessage(out)
	return &q
}

// bufferedAnswer holds a handler's answer until it is translated; an NDJSON answer
// (a streamed export) is translated and passed on line by line instead.
type bufferedAnswer struct {
	header   http.Header
	status   int
	body     *bytes.Buffer // on a buffer of answerBuffers
	orig     http.ResponseWriter
	version  apiversion.Version
	resource string
	streamed bool
	passed   bool
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

// answerBuffers hold answers while they are translated, and their translations:
// a page's buffers allocated afresh for every request cost an old version's list
// nearly what rendering it did (docs/performance.md).
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// keepBuffer gives b, the buffer held took from answerBuffers, back to them, once
// its bytes are written; unless an answer (an import's report) grew it past what
// an ordinary page needs.
func keepBuffer(held *[]byte, b []byte) {
	if cap(b) <= 1<<20 {
		*held = b[:0]
		answerBuffers.Put(held)
	}
}

func (b *bufferedAnswer) WriteHeader(status int) {
	if b.status != 0 {
		return
	}
	b.status = status
	switch ct := b.header.Get(echo.HeaderContentType); {
	case strings.HasPrefix(ct, "application/x-ndjson"):
		b.streamed = true
		b.orig.WriteHeader(status)
	case !strings.HasPrefix(ct, echo.MIMEApplicationJSON) && ct != "":
		// The same in every version (a CSV export): passed on as written.
		b.passed = true
		b.orig.WriteHeader(status)
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.WriteHeader(http.StatusOK)
	}
	if b.passed {
		return b.orig.Write(p)
	}
	b.body.Write(p)
	if !b.streamed {
		return len(p), nil
	}
	for {
		line := b.body.Bytes()
		i := bytes.IndexByte(line, '\n')
		if i < 0 {
			return len(p), nil
		}
		if err := b.writeLine(line[:i]); err != nil {
			return 0, err
		}
		b.body.Next(i + 1)
	}
}

// flushLine passes on what is left of a streamed answer, a last line without its
// newline.
func (b *bufferedAnswer) flushLine() error {
	if !b.streamed || b.body.Len() == 0 {
		return nil
	}
	return b.writeLine(b.body.Bytes())
}

func (b *bufferedAnswer) writeLine(line []byte) error {
	out, err := apiversion.API.ResponseBody(b.version, b.resource, line)
	if err != nil {
		return err
	}
	_, err = b.orig.Write(append(out, '\n'))
	if f, ok := b.orig.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

// Flush keeps a streamed answer streaming.
func (b *bufferedAnswer) Flush() {
	if f, ok := b.orig.(http.Flusher); ok && (b.streamed || b.passed) {
		f.Flush()
	}
}
