package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
)

// BodyHasher writes a canonical encoding of the request body of c to w, reading the
// body as a stream, and leaves what the handler needs readable (for example by
// replacing the body, or by putting a spooled form in the request context).
// It returns a *problem.Problem for a body the client must fix.
type BodyHasher interface {
	HashBody(c echo.Context, w io.Writer) error
}

// BodyHasherFunc adapts a function to BodyHasher.
type BodyHasherFunc func(c echo.Context, w io.Writer) error

// HashBody calls f.
func (f BodyHasherFunc) HashBody(c echo.Context, w io.Writer) error { return f(c, w) }

// Fingerprinter computes a request's fingerprint: the lowercase hex SHA-256 over the
// method, path, canonical query string and canonical body (docs/idempotency.md, What identifies a request).
//
//   - Query: parameters sorted by name, values of one name kept in order.
//   - Body, by media type (parameters such as charset ignored): an empty body is
//     its own kind, distinct from {} and null; JSON (application/json, any +json,
//     or no Content-Type) by CanonicalJSON; a media type in Hashers by its hasher
//     (riskapi plugs multipart/form-data in there, hashed as a stream); anything
//     else by its bytes.
type Fingerprinter struct {
	// MaxBodyBytes bounds bodies buffered for hashing (JSON and raw bytes); larger
	// ones get 413 PAYLOAD_TOO_LARGE. Optional. Default 1 MiB.
	MaxBodyBytes int64
	// Hashers maps media types to their stream hashers. Optional.
	Hashers map[string]BodyHasher
}

// DefaultMaxBodyBytes is Fingerprinter.MaxBodyBytes when zero.
const DefaultMaxBodyBytes = 1 << 20

// fingerprintVersion frames the hash so a future change of canonical form cannot
// collide with stored fingerprints.
const fingerprintVersion = "riskapi-idempotency-fingerprint/1\n"

// Fingerprint returns the fingerprint of c's request. Errors: *problem.Problem
// VALIDATION_FAILED (malformed query or body) or PAYLOAD_TOO_LARGE.
func (f *Fingerprinter) Fingerprint(c echo.Context) (string, error) {
	req := c.Request()
	query, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return "", problem.Invalid("query", "is not a valid query string")
	}
	h := sha256.New()
	// Newlines cannot occur in a method, a path or an encoded query: the frame is
	// unambiguous.
	io.WriteString(h, fingerprintVersion+req.Method+"\n"+req.URL.Path+"\n"+query.Encode()+"\n")

	mt := mediaType(req)
	if bh, ok := f.Hashers[mt]; ok {
		io.WriteString(h, "stream "+mt+"\n")
		if err := bh.HashBody(c, h); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	body, err := f.buffer(req)
	if err != nil {
		return "", err
	}
	switch {
	case len(body) == 0:
		io.WriteString(h, "empty\n")
	case mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json"):
		canon, err := CanonicalJSON(make([]byte, 0, len(body)), body)
		if err != nil {
			return "", problem.Invalid("body", "is not valid JSON: "+reason(err))
		}
		io.WriteString(h, "json\n")
		h.Write(canon)
	default:
		io.WriteString(h, "bytes\n")
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// buffer reads the whole body (at most MaxBodyBytes) and puts it back for the handler.
func (f *Fingerprinter) buffer(req *http.Request) ([]byte, error) {
	limit := f.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		var httpErr *echo.HTTPError
		if errors.As(err, &tooLarge) || errors.As(err, &httpErr) && httpErr.Code == http.StatusRequestEntityTooLarge {
			return nil, problem.New(problem.PayloadTooLarge, "the request body is too large")
		}
		return nil, problem.New(problem.ValidationFailed, "body: could not be read")
	}
	if int64(len(body)) > limit {
		return nil, problem.New(problem.PayloadTooLarge, "the request body is larger than %d bytes", limit)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

func mediaType(req *http.Request) string {
	ct := req.Header.Get(echo.HeaderContentType)
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

func reason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = msg[i+1:]
	}
	return strings.TrimPrefix(msg, "jsontext: ")
}
