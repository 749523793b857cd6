package reqbody_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// counting is a request body that counts the bytes and Read calls it serves.
type counting struct {
	r            io.Reader
	bytes, calls int
	afterEOF     int // Read calls after it returned io.EOF
	eof          bool
}

func (c *counting) Read(p []byte) (int, error) {
	c.calls++
	if c.eof {
		c.afterEOF++
	}
	n, err := c.r.Read(p)
	c.bytes += n
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

func (c *counting) Close() error { return nil }

// TestReadOnce: the body is consumed from the connection once, and every later Read —
// and any reader of req.Body — gets the same bytes, the very same buffer.
func TestReadOnce(t *testing.T) {
	t.Parallel()
	const body = `{"title":"once"}`
	src := &counting{r: strings.NewReader(body)}
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Body, req.ContentLength = src, int64(len(body))

	first, err := reqbody.Read(req, 1<<20)
	if err != nil || string(first) != body {
		t.Fatalf("Read = %q, %v", first, err)
	}
	consumed := src.calls
	second, err := reqbody.Read(req.WithContext(t.Context()), 0) // a derived request shares it
	if err != nil || &second[0] != &first[0] {
		t.Fatalf("second Read = %q, %v: not the memoised buffer", second, err)
	}
	rest, _ := io.ReadAll(req.Body)
	if string(rest) != body {
		t.Fatalf("req.Body reads %q after Read, want %q", rest, body)
	}
	if src.bytes != len(body) || src.calls != consumed || src.afterEOF != 0 {
		t.Fatalf("the body served %d bytes in %d reads (%d after EOF); want %d bytes, all in the first Read",
			src.bytes, src.calls, src.afterEOF, len(body))
	}
}

func TestReadTooLarge(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		limit int64
		wrap  bool
	}{"own limit": {limit: 8}, "route limit": {wrap: true}} {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"title":"too long"}`))
			if tc.wrap {
				req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, 8)
			}
			for i := 0; i < 2; i++ { // the failure is memoised too
				_, err := reqbody.Read(req, tc.limit)
				if p := problem.As(err); p == nil || p.Code != problem.PayloadTooLarge {
					t.Fatalf("Read #%d = %v, want PAYLOAD_TOO_LARGE", i+1, err)
				}
			}
		})
	}
	// A memoised body longer than a later caller's own limit.
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`0123456789`))
	if _, err := reqbody.Read(req, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := reqbody.Read(req, 4); problem.As(err) == nil || problem.As(err).Code != problem.PayloadTooLarge {
		t.Fatalf("Read with a smaller limit = %v, want PAYLOAD_TOO_LARGE", err)
	}
}

// TestReadEndedEarly: however the body breaks off — short of Content-Length, a reset
// connection, a read deadline — the client gets 400 naming "body", never an error that
// would become a 500.
func TestReadEndedEarly(t *testing.T) {
	t.Parallel()
	for name, cause := range map[string]error{
		"short of Content-Length": io.ErrUnexpectedEOF,
		"connection reset":        syscall.ECONNRESET,
		"read deadline":           errors.New("i/o timeout"),
	} {
		t.Run(name, func(t *testing.T) {
			src := &counting{r: io.MultiReader(strings.NewReader(`{"title":"half`), errReader{cause})}
			req := httptest.NewRequest(http.MethodPost, "/", nil)
			req.Body = src
			for i := 0; i < 2; i++ {
				_, err := reqbody.Read(req, 0)
				p := problem.As(err)
				if p == nil || p.Code != problem.ValidationFailed || len(p.Errors) != 1 || p.Errors[0].Field != "body" ||
					p.Errors[0].Detail != reqbody.EndedEarly {
					t.Fatalf("Read #%d = %v, want VALIDATION_FAILED body: %s", i+1, err, reqbody.EndedEarly)
				}
			}
			if _, err := io.ReadAll(req.Body); err == nil {
				t.Fatal("req.Body reads cleanly after the body broke off")
			}
			if src.afterEOF != 0 || src.calls != 2 {
				t.Fatalf("the broken body was read %d times", src.calls)
			}
		})
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadNoBody(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodDelete, "/", nil)
	if b, err := reqbody.Read(req, 10); err != nil || len(b) != 0 {
		t.Fatalf("Read = %q, %v", b, err)
	}
}

func TestMediaType(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]struct {
		mt string
		ok bool
	}{
		"":                                {"", true},
		"application/json":                {"application/json", true},
		"Application/JSON; charset=UTF-8": {"application/json", true},
		"multipart/form-data; boundary=x": {"multipart/form-data", true},
		"application/json; charset":       {"", false},
		"/json":                           {"", false},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if mt, ok := reqbody.MediaType(req); mt != want.mt || ok != want.ok {
			t.Errorf("MediaType(%q) = %q, %v; want %q, %v", ct, mt, ok, want.mt, want.ok)
		}
	}
}
