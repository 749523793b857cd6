package idempotency

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apiversion"
	"github.com/riskapi/riskapi/internal/jsonbody"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// HashMode says what a BodyHasher must leave of a body once it has hashed it.
type HashMode int

const (
	// HashKeep: the handler may run next and read the body, so the hasher leaves
	// what it needs readable (for example by replacing the body, or by putting a
	// spooled form in the request context).
	HashKeep HashMode = iota
	// HashDiscard: a stored record answers the request (a replay or 422) and the
	// handler never runs, so the hasher keeps nothing of the body: it reads and
	// hashes it, and stores no temporary file and no copy. The canonical encoding
	// written to w must be byte for byte what HashKeep writes for the same body, or
	// a retry would be refused instead of replayed.
	HashDiscard
)

// BodyHasher writes a canonical encoding of the request body of c to w, reading the
// body as a stream, and leaves of it what mode says.
// It returns a *problem.Problem for a body the client must fix.
type BodyHasher interface {
	HashBody(c echo.Context, w io.Writer, mode HashMode) error
}

// BodyHasherFunc adapts a function to BodyHasher.
type BodyHasherFunc func(c echo.Context, w io.Writer, mode HashMode) error

// HashBody calls f.
func (f BodyHasherFunc) HashBody(c echo.Context, w io.Writer, mode HashMode) error {
	return f(c, w, mode)
}

// Fingerprinter computes a request's fingerprint: the lowercase hex HMAC-SHA256
// under Key over the method, path, canonical query string and canonical body
// (docs/idempotency.md, What identifies a request). Keyed, a copy of the records
// lets no one test guesses of a body (a password, say) without the key.
//
//   - Query: parameters sorted by name, values of one name kept in order.
//   - Body, by media type (parameters such as charset ignored): an empty body is
//     its own kind, distinct from {} and null; JSON (jsonbody.IsJSON: the rule the
//     handlers decode by) by jsonbody.Canonical; a media type in Hashers by its
//     hasher (riskapi plugs multipart/form-data in there, hashed as a stream);
//     anything else by its bytes.
//
// Buffered bodies are read through reqbody, once: the handler decodes the same
// buffer, and a body that cannot be read is answered there (413, or 400 when it
// ended early) before any record is touched. A streamed body (Streams) may be large:
// the engine looks its key up before reading it (docs/idempotency.md, Large bodies).
type Fingerprinter struct {
	// MaxBodyBytes bounds bodies buffered for hashing (JSON and raw bytes); larger
	// ones get 413 PAYLOAD_TOO_LARGE. Optional. Default 1 MiB.
	MaxBodyBytes int64
	// Hashers maps media types to their stream hashers. Optional.
	Hashers map[string]BodyHasher
	// Key is the HMAC key (riskapi: 32 bytes derived from SECRET_KEY, set by
	// internal/server). Optional for the engine's own tests: without one the HMAC's
	// key is empty, which keeps no secret.
	Key []byte
}

// DefaultMaxBodyBytes is Fingerprinter.MaxBodyBytes when zero.
const DefaultMaxBodyBytes = 1 << 20

// fingerprintVersion frames the hash so a future change of canonical form cannot
// collide with stored fingerprints.
// Version 2 is keyed; version 1 fingerprints (plain SHA-256) were erased by
// migration 0012.
const fingerprintVersion = "riskapi-idempotency-fingerprint/2\n"

// Streams reports whether req's body goes to a stream hasher (its media type is in
// Hashers) rather than being buffered.
func (f *Fingerprinter) Streams(req *http.Request) bool {
	mt, ok := reqbody.MediaType(req)
	if !ok {
		return false
	}
	_, ok = f.Hashers[mt]
	return ok
}

// Fingerprint returns the fingerprint of c's request; mode is passed to a stream
// hasher (a buffered body is kept for the handler whatever mode says, it costs no
// more than its bound). Errors: *problem.Problem VALIDATION_FAILED (malformed query
// or body, or a body that ended early) or PAYLOAD_TOO_LARGE.
func (f *Fingerprinter) Fingerprint(c echo.Context, mode HashMode) (string, error) {
	req := c.Request()
	query, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return "", problem.Invalid("query", "is not a valid query string")
	}
	h := hmac.New(sha256.New, f.Key)
	// Newlines cannot occur in a method, a path or an encoded query: the frame is
	// unambiguous.
	io.WriteString(h, fingerprintVersion+req.Method+"\n"+req.URL.Path+"\n"+query.Encode()+"\n")
	// The API version the request is read in (docs/api-versions.md): one body means
	// two requests in two versions, so a key reused across versions is refused. The
	// first version adds nothing, so a record stored before versions existed (every
	// request was in it) still matches its retry.
	if v, ok := apiversion.Of(req.Context()); ok && v != apiversion.V20261201 {
		io.WriteString(h, "api-version "+string(v)+"\n")
	}

	if mt, ok := reqbody.MediaType(req); ok {
		if bh, ok := f.Hashers[mt]; ok {
			io.WriteString(h, "stream "+mt+"\n")
			if err := bh.HashBody(c, h, mode); err != nil {
				return "", err
			}
			return hex.EncodeToString(h.Sum(nil)), nil
		}
	}
	limit := f.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	body, err := reqbody.Read(req, limit)
	if err != nil {
		return "", err
	}
	switch {
	case len(body) == 0:
		io.WriteString(h, "empty\n")
	case jsonbody.IsJSON(req):
		io.WriteString(h, "json\n")
		if err := jsonbody.WriteCanonical(h, body); err != nil {
			return "", err
		}
	default:
		io.WriteString(h, "bytes\n")
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
