package reqbody

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// Deadline gives req's body until d from now to arrive whole (README.md,
// "Connections": 30 s for a JSON body). A body still arriving then fails to read,
// which Error answers with 400 VALIDATION_FAILED "body: arrived too slowly" — so a
// client sending one byte a second cannot hold a request, and its goroutine and
// buffer, for ever. The deadline is lifted once the body has been read to its end,
// so the rest of the request is not cut by it. w is the response writer (the
// connection is reached through http.ResponseController); on a writer that has no
// connection, such as a test's recorder, nothing changes.
func Deadline(w http.ResponseWriter, req *http.Request, d time.Duration) {
	if req.Body == nil || req.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return
	}
	req.Body = &pacedBody{ReadCloser: req.Body, rc: rc}
}

// MinRate keeps req's body arriving at least min bytes in every window instead of
// bounding it as a whole: an upload of any size over a slow link keeps going, while
// one that stalls is cut within a window (README.md, "Connections"), and fails to
// read as with Deadline. On a writer without a connection nothing changes.
func MinRate(w http.ResponseWriter, req *http.Request, min int64, window time.Duration) {
	if req.Body == nil || req.Body == http.NoBody || min <= 0 || window <= 0 {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(window)) != nil {
		return
	}
	req.Body = &pacedBody{ReadCloser: req.Body, rc: rc, min: min, window: window}
}

// pacedBody moves the connection's read deadline along as the body arrives: by a
// window each time min more bytes came (min 0: never), and away once the body ended.
type pacedBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	min, got int64
	window   time.Duration
	ended    bool
}

func (b *pacedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.ended {
		return n, err
	}
	b.got += int64(n)
	if b.min > 0 && b.got >= b.min {
		b.got = 0
		b.rc.SetReadDeadline(time.Now().Add(b.window))
	}
	if errors.Is(err, io.EOF) {
		b.ended = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
