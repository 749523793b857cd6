// Package reqbody reads an HTTP request body once. The first Read buffers it and
// memoises the outcome in the request itself, so the idempotency fingerprint and the
// handler share one pass over one buffer; every later Read, and any reader of
// req.Body, sees the same bytes or the same failure.
//
// It is the one place that says what a client sees when its body cannot be read
// (docs/errors.md): 413 PAYLOAD_TOO_LARGE past the route's body limit, and 400
// VALIDATION_FAILED "body: ended early" when the client hangs up, stalls or breaks the
// framing mid-body — a client fault, never a 500 or an ERROR log.
package reqbody

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"

	"github.com/riskapi/riskapi/internal/problem"
)

// memo is a request body that has been read: it replaces req.Body, keeps the bytes
// (or the failure) for later Reads and still reads as the original body would.
type memo struct {
	r    bytes.Reader
	data []byte
	err  error
	orig io.Closer
}

func (m *memo) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	return m.r.Read(p)
}

func (m *memo) Close() error { return m.orig.Close() }

// preallocMax bounds the buffer sized from Content-Length before any byte arrives:
// the header is the client's word, not yet a fact.
const preallocMax = 1 << 20

// Read returns req's whole body. The first call reads it — at most limit bytes when
// limit > 0, otherwise as much as the route's body limit (http.MaxBytesReader) lets
// through — and replaces req.Body by the memo; later calls return the same slice
// without reading again (413 if it is longer than their own limit). A request without
// a body reads as empty.
//
// Errors, as Error maps them: *problem.Problem PAYLOAD_TOO_LARGE or
// VALIDATION_FAILED (the body ended early).
func Read(req *http.Request, limit int64) ([]byte, error) {
	m, ok := req.Body.(*memo)
	if !ok {
		m = read(req.Body, req.ContentLength, limit)
		req.Body = m
	}
	if m.err != nil {
		return nil, m.err
	}
	if limit > 0 && int64(len(m.data)) > limit {
		return nil, tooLarge(limit)
	}
	return m.data, nil
}

func read(body io.ReadCloser, contentLength, limit int64) *memo {
	if body == nil || body == http.NoBody {
		return &memo{orig: io.NopCloser(nil)}
	}
	m := &memo{orig: body}
	var src io.Reader = body
	if limit > 0 {
		src = io.LimitReader(body, limit+1)
	}
	data, err := readAll(src, contentLength, limit)
	if err != nil {
		m.err = Error(err)
		return m
	}
	m.data = data
	if limit > 0 && int64(len(m.data)) > limit {
		m.data, m.err = nil, tooLarge(limit)
		return m
	}
	m.r.Reset(m.data)
	return m
}

// readAll is io.ReadAll with a first buffer sized from Content-Length (one byte more,
// to see the end without growing), so a typical body is read without a copy.
func readAll(src io.Reader, contentLength, limit int64) ([]byte, error) {
	size := min(max(contentLength, 0)+1, preallocMax)
	if limit > 0 {
		size = min(size, limit+1)
	}
	buf := make([]byte, 0, max(size, 512))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func tooLarge(limit int64) error {
	return problem.New(problem.PayloadTooLarge, "the request body is larger than %d bytes", limit)
}

// Error turns a failure to read a request body into what the client sees: 413
// PAYLOAD_TOO_LARGE past the route's limit (*http.MaxBytesError), a problem as it
// is, and 400 VALIDATION_FAILED naming "body" for anything else. Reading a request
// body only fails on the client's side of the connection — it hung up before
// Content-Length or the last chunk, stalled past a read deadline, or sent malformed
// chunked framing — so none of it is a 500 (docs/errors.md, "A body that ends
// early").
func Error(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	if p := problem.As(err); p != nil {
		return p
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return problem.Invalid("body", TooSlow)
	}
	return problem.Invalid("body", EndedEarly)
}

// TooSlow is the field detail of the 400 for a body that did not arrive in time
// (Deadline, MinRate).
const TooSlow = "arrived too slowly: a JSON body must arrive within 30 s, an upload at " +
	"1 KiB/s or faster (README.md, Connections); send the whole request again"

// EndedEarly is the field detail of the 400 for a body that could not be read to
// its end.
const EndedEarly = "ended early: it stopped before it was complete (the connection closed or " +
	"failed mid-body, or the content is cut short); send the whole request again"

// MediaType returns the media type of req's Content-Type in lower case, without
// parameters such as charset (RFC 9110 section 8.3.1); "" when there is none. ok is
// false for a Content-Type that does not parse.
func MediaType(req *http.Request) (mt string, ok bool) {
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		return "", true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", false
	}
	return mt, true
}

// Replace makes data req's body as Read returns it: a request body translated from
// an older API version (internal/apiversion), read by the handler in the newest.
func Replace(req *http.Request, data []byte) {
	m := &memo{orig: req.Body, data: data}
	if req.Body == nil {
		m.orig = io.NopCloser(nil)
	}
	m.r.Reset(data)
	req.Body = m
	req.ContentLength = int64(len(data))
}
