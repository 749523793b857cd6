package idempotency

import (
	"bytes"
	"net/http"
)

// recorder buffers a handler's response so that nothing reaches the client before
// the outcome is committed: a 2xx the client saw always has its record.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// flushTo writes the recorded response to w, keeping headers w already has (such as
// X-Request-Id) and adding replayed.
func (r *recorder) flushTo(w http.ResponseWriter, replayed string) {
	h := w.Header()
	for k, v := range r.header {
		h[k] = v
	}
	h.Set(HeaderReplayed, replayed)
	w.WriteHeader(r.status)
	w.Write(r.body.Bytes())
}
