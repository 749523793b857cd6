package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

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
			buf := &bufferedAnswer{header: orig.Header()}
			res.Writer = buf
			err := next(c)
			res.Writer = orig
			if err != nil {
				return translateProblem(err, v, resource)
			}
			if buf.status == 0 {
				return nil
			}
			body := buf.body.Bytes()
			if buf.body.Len() > 0 && strings.HasPrefix(orig.Header().Get(echo.HeaderContentType), echo.MIMEApplicationJSON) {
				out, terr := apiversion.API.ResponseBody(v, resource, body)
				if terr != nil {
					return terr
				}
				body = append(out, '\n')
			}
			orig.WriteHeader(buf.status)
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

// bufferedAnswer holds a handler's answer until it is translated.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
