package upload_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/upload"
)

// part is one part of a test form.
type part struct {
	name, filename, contentType, body string
	file                              bool
	header                            textproto.MIMEHeader // extra headers
}

func field(name, value string) part { return part{name: name, body: value} }
func file(name, filename, ct, body string) part {
	return part{name: name, filename: filename, contentType: ct, body: body, file: true}
}

// form encodes parts with boundary.
func form(t testing.TB, boundary string, parts ...part) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.SetBoundary(boundary); err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.file {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.name, p.filename))
			if p.contentType != "" {
				h.Set("Content-Type", p.contentType)
			}
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.name))
		}
		for k, v := range p.header {
			h[k] = v
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(pw, p.body)
	}
	w.Close()
	return b.String(), w.FormDataContentType()
}

type result struct {
	status      int
	fingerprint string
	code        problem.Code
	field       string
	form        *upload.Form
}

// harness runs one request through the middleware; the handler fingerprints the body
// and reads the memoised form again, as the idempotency engine and a handler would.
type harness struct {
	dir   string
	cfg   upload.Config
	limit int64
	last  *upload.Form
}

func newHarness(t *testing.T, rules map[string]upload.Rule) *harness {
	return &harness{dir: filepath.Join(t.TempDir(), "tmp"), cfg: upload.Config{Rules: rules, Logger: quiet}, limit: 1 << 30}
}

func (h *harness) do(t *testing.T, body, contentType string) result {
	t.Helper()
	return h.doReader(t, strings.NewReader(body), contentType)
}

func (h *harness) doReader(t *testing.T, body io.Reader, contentType string) result {
	t.Helper()
	return h.doMode(t, body, contentType, idempotency.HashKeep)
}

// discard is do with the body hashed in idempotency.HashDiscard mode, on a spool
// whose folder cannot be created (its parent is a regular file): a request that
// wrote a single file would fail. The handler checks that FormOf then fails.
func (h *harness) discard(t *testing.T, body, contentType string) result {
	t.Helper()
	return h.doMode(t, strings.NewReader(body), contentType, idempotency.HashDiscard)
}

func (h *harness) doMode(t *testing.T, body io.Reader, contentType string, mode idempotency.HashMode) result {
	t.Helper()
	cfg := h.cfg
	cfg.Dir = h.dir
	if mode == idempotency.HashDiscard {
		blocker := filepath.Join(t.TempDir(), "not-a-folder")
		if err := os.WriteFile(blocker, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.Dir = filepath.Join(blocker, "tmp")
	}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	var res result
	e := echo.New()
	e.POST("/u", func(c echo.Context) error {
		c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, h.limit)
		sum := sha256.New()
		if err := upload.HashBody(c, sum, mode); err != nil {
			return err
		}
		if mode == idempotency.HashDiscard {
			if _, err := upload.FormOf(c); err == nil {
				t.Error("FormOf succeeded after the body was discarded")
			}
			res.fingerprint = hex.EncodeToString(sum.Sum(nil))
			return c.NoContent(http.StatusNoContent)
		}
		f1, err := upload.FormOf(c)
		if err != nil {
			return err
		}
		f2, _ := upload.FormOf(c)
		if f1 != f2 {
			t.Error("FormOf is not memoised")
		}
		res.fingerprint = hex.EncodeToString(sum.Sum(nil))
		res.form = f1
		h.last = f1
		// Files are readable while the request lasts.
		for _, p := range f1.Parts {
			if p.File != nil {
				fh, err := p.File.Open()
				if err != nil {
					t.Errorf("open spooled file: %v", err)
					continue
				}
				got, _ := io.ReadAll(fh)
				fh.Close()
				if s := sha256.Sum256(got); s != p.File.SHA256 || int64(len(got)) != p.File.Size {
					t.Errorf("spooled bytes of %s differ from their digest", p.Name)
				}
			}
		}
		return c.NoContent(http.StatusNoContent)
	}, mw)
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if p := problem.As(err); p != nil {
			res.code = p.Code
			if len(p.Errors) > 0 {
				res.field = p.Errors[0].Field
			}
			c.NoContent(p.Status())
			return
		}
		t.Logf("handler error: %v", err)
		c.NoContent(http.StatusInternalServerError)
	}
	req := httptest.NewRequest(http.MethodPost, "/u", body)
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	res.status = rec.Code
	if left := h.tempFiles(t); len(left) > 0 {
		t.Errorf("temporary files left after the request: %v", left)
	}
	return res
}

func (h *harness) tempFiles(t *testing.T) []string {
	entries, err := os.ReadDir(h.dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

var quiet = slog.New(slog.DiscardHandler)

var attachmentRules = map[string]upload.Rule{"file": {File: true}, "description": {}}

func TestFingerprintIgnoresBoundaryAndOrderAcrossNames(t *testing.T) {
	h := newHarness(t, nil)
	base := []part{field("description", "quarterly"), file("file", "a.pdf", "application/pdf", "%PDF-1.7 bytes")}
	b1, ct1 := form(t, "boundary-one", base...)
	b2, ct2 := form(t, "another-boundary-0123456789", base[1], base[0])
	r1, r2 := h.do(t, b1, ct1), h.do(t, b2, ct2)
	if r1.status != 204 || r2.status != 204 {
		t.Fatalf("status %d, %d", r1.status, r2.status)
	}
	if r1.fingerprint != r2.fingerprint {
		t.Error("same form with another boundary and name order fingerprints differently")
	}

	// Header spelling and Content-Type parameters' order do not matter either.
	p := file("file", "a.pdf", "Application/PDF", "%PDF-1.7 bytes")
	b3, ct3 := form(t, "x", field("description", "quarterly"), p)
	r3 := h.do(t, b3, ct3)
	if r3.fingerprint != r1.fingerprint {
		t.Error("the MIME type's case changed the fingerprint")
	}
}

func TestFingerprintDistinguishes(t *testing.T) {
	h := newHarness(t, map[string]upload.Rule{"file": {File: true, Max: 2}, "description": {Max: 2}})
	base := []part{field("description", "q"), file("file", "a.pdf", "application/pdf", "bytes")}
	b, ct := form(t, "b", base...)
	want := h.do(t, b, ct).fingerprint
	cases := map[string][]part{
		"other bytes":        {base[0], file("file", "a.pdf", "application/pdf", "bytez")},
		"other filename":     {base[0], file("file", "b.pdf", "application/pdf", "bytes")},
		"filename with path": {base[0], file("file", "x/a.pdf", "application/pdf", "bytes")},
		"other MIME type":    {base[0], file("file", "a.pdf", "application/octet-stream", "bytes")},
		"MIME parameter":     {base[0], file("file", "a.pdf", "application/pdf; version=2", "bytes")},
		"other field":        {field("description", "Q"), base[1]},
		"field missing":      {base[1]},
		"order within name":  {field("description", "1"), field("description", "2"), base[1]},
		"two files":          {base[0], base[1], base[1]},
		// Length prefixes: moving bytes between filename and type must not collide.
		"shifted strings": {base[0], file("file", "a.pdfa", "pplication/pdf", "bytes")},
	}
	seen := map[string]string{want: "base"}
	for name, parts := range cases {
		b, ct := form(t, "b", parts...)
		r := h.do(t, b, ct)
		if r.status != 204 {
			t.Fatalf("%s: status %d %s", name, r.status, r.code)
		}
		if prev, ok := seen[r.fingerprint]; ok {
			t.Errorf("%s fingerprints like %s", name, prev)
		}
		seen[r.fingerprint] = name
	}
	// Order within one name matters; reversed is a different request.
	b1, ct1 := form(t, "b", field("description", "2"), field("description", "1"), base[1])
	if r := h.do(t, b1, ct1); seen[r.fingerprint] != "" {
		t.Errorf("reversed values of one name fingerprint like %s", seen[r.fingerprint])
	}
}

func TestRulesAndLimits(t *testing.T) {
	tests := []struct {
		name      string
		parts     []part
		wantCode  problem.Code
		wantField string
	}{
		{"unknown field", []part{field("colour", "red")}, problem.ValidationFailed, "colour"},
		{"unknown file", []part{file("other", "x", "", "y")}, problem.ValidationFailed, "other"},
		{"file sent as field", []part{field("file", "x")}, problem.ValidationFailed, "file"},
		{"field sent as file", []part{file("description", "d.txt", "", "x")}, problem.ValidationFailed, "description"},
		{"file twice", []part{file("file", "a", "", "1"), file("file", "b", "", "2")}, problem.ValidationFailed, "file"},
		{"overlong field", []part{field("description", strings.Repeat("x", 64<<10+1))}, problem.ValidationFailed, "description"},
		{"bad content type", []part{file("file", "a", "not a type", "x")}, problem.ValidationFailed, "file"},
		{"no name", []part{{header: textproto.MIMEHeader{"Content-Disposition": {"form-data"}}}}, problem.ValidationFailed, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, attachmentRules)
			b, ct := form(t, "b", tt.parts...)
			r := h.do(t, b, ct)
			if r.code != tt.wantCode || r.field != tt.wantField {
				t.Errorf("got %d %s field %q, want %s field %q", r.status, r.code, r.field, tt.wantCode, tt.wantField)
			}
		})
	}
}

func TestMalformedBodies(t *testing.T) {
	h := newHarness(t, attachmentRules)
	b, ct := form(t, "b", file("file", "a", "", strings.Repeat("z", 600<<10)))
	for name, tc := range map[string]struct{ body, ct string }{
		"truncated":        {b[:len(b)/2], ct},
		"no boundary":      {b, "multipart/form-data"},
		"wrong boundary":   {b, "multipart/form-data; boundary=zzz"},
		"not multipart":    {b, "application/octet-stream"},
		"garbage":          {"hello", ct},
		"header too large": {"--b\r\nContent-Disposition: form-data; name=\"" + strings.Repeat("n", 20<<20), ct},
	} {
		t.Run(name, func(t *testing.T) {
			if r := h.do(t, tc.body, tc.ct); r.status != 400 || r.code != problem.ValidationFailed {
				t.Errorf("got %d %s, want 400 VALIDATION_FAILED", r.status, r.code)
			}
		})
	}
}

func TestTooManyParts(t *testing.T) {
	h := newHarness(t, nil)
	h.cfg.MaxParts = 3
	var parts []part
	for i := range 4 {
		parts = append(parts, file(fmt.Sprint("f", i), "a", "", "x"))
	}
	b, ct := form(t, "b", parts...)
	if r := h.do(t, b, ct); r.status != 400 || r.field != "body" {
		t.Errorf("got %d field %q", r.status, r.field)
	}
}

func TestOverLimitIs413AndLeavesNoFile(t *testing.T) {
	h := newHarness(t, attachmentRules)
	h.limit = 1 << 20
	b, ct := form(t, "b", file("file", "big.bin", "", strings.Repeat("x", 3<<20)))
	// io.MultiReader hides the length: the limit trips while streaming.
	r := h.doReader(t, io.MultiReader(strings.NewReader(b)), ct)
	if r.status != http.StatusRequestEntityTooLarge || r.code != problem.PayloadTooLarge {
		t.Fatalf("got %d %s, want 413 PAYLOAD_TOO_LARGE", r.status, r.code)
	}
	// doReader already checked that no temporary file is left.
}

func TestSpoolsChunkBoundarySizes(t *testing.T) {
	h := newHarness(t, attachmentRules)
	for _, n := range []int{0, 1, 256<<10 - 1, 256 << 10, 256<<10 + 1, 5<<20 + 3} {
		data := bytes.Repeat([]byte{byte(n)}, n)
		for i := range data {
			data[i] ^= byte(i * 7)
		}
		b, ct := form(t, "b", file("file", "f", "", string(data)))
		r := h.do(t, b, ct)
		if r.status != 204 {
			t.Fatalf("size %d: status %d %s", n, r.status, r.code)
		}
		f := r.form.Files("file")[0]
		if f.Size != int64(n) || f.SHA256 != sha256.Sum256(data) {
			t.Errorf("size %d: got size %d sha %s", n, f.Size, f.SHA256Hex())
		}
		if f.ContentType != "application/octet-stream" {
			t.Errorf("default content type = %q", f.ContentType)
		}
	}
}

func TestMoveToKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	cfg := upload.Config{Dir: filepath.Join(dir, "tmp"), Rules: attachmentRules, Logger: quiet}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "final", "att")
	e := echo.New()
	e.POST("/u", func(c echo.Context) error {
		f, err := upload.FormOf(c)
		if err != nil {
			return err
		}
		if err := f.Files("file")[0].MoveTo(dst); err != nil {
			return err
		}
		return c.NoContent(201)
	}, mw)
	b, ct := form(t, "b", file("file", "f", "text/plain", "kept"))
	req := httptest.NewRequest(http.MethodPost, "/u", strings.NewReader(b))
	req.Header.Set("Content-Type", ct)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != "kept" {
		t.Fatalf("moved file: %q, %v", got, err)
	}
	if left, _ := os.ReadDir(cfg.Dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestHashBodyWithoutSpoolHashesRawBytes(t *testing.T) {
	e := echo.New()
	var fps []string
	e.POST("/u", func(c echo.Context) error {
		h := sha256.New()
		if err := upload.HashBody(c, h, idempotency.HashKeep); err != nil {
			return err
		}
		fps = append(fps, hex.EncodeToString(h.Sum(nil)))
		body, _ := io.ReadAll(c.Request().Body)
		if len(body) == 0 {
			t.Error("the body was not put back for the handler")
		}
		return c.NoContent(204)
	})
	for _, boundary := range []string{"b1", "b2"} {
		b, ct := form(t, boundary, field("x", "y"))
		req := httptest.NewRequest(http.MethodPost, "/u", strings.NewReader(b))
		req.Header.Set("Content-Type", ct)
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	if len(fps) != 2 || fps[0] == fps[1] {
		t.Errorf("raw fingerprints %v: want two, differing by boundary", fps)
	}
}

// TestDiscardFingerprintsLikeSpool: hashing a form without keeping it (a replay's or a
// 422's pass) gives the fingerprint spooling it gives, for every shape of form, and
// refuses what spooling refuses — without writing a byte to disk (discard's spool
// folder cannot even be created).
func TestDiscardFingerprintsLikeSpool(t *testing.T) {
	rules := map[string]upload.Rule{"file": {File: true, Max: 3}, "description": {Max: 2}}
	big := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		return string(b)
	}
	cases := map[string][]part{
		"fields only":      {field("description", "q")},
		"empty file":       {file("file", "e.bin", "", "")},
		"one file":         {field("description", "q"), file("file", "a.pdf", "application/pdf", "%PDF bytes")},
		"chunk size":       {file("file", "c.bin", "", big(256<<10))},
		"chunk size + 1":   {file("file", "c.bin", "", big(256<<10+1))},
		"several files":    {file("file", "1", "text/plain; charset=UTF-8", big(700<<10)), field("description", "x"), file("file", "2", "", big(3<<20)), field("description", "y")},
		"odd content type": {file("file", "a", "Application/PDF; b=2; a=1", "bytes")},
	}
	for name, parts := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, rules)
			b, ct := form(t, "boundary-"+name[:3], parts...)
			kept, dropped := h.do(t, b, ct), h.discard(t, b, ct)
			if kept.status != 204 || dropped.status != 204 {
				t.Fatalf("status: spooled %d %s, discarded %d %s", kept.status, kept.code, dropped.status, dropped.code)
			}
			if kept.fingerprint != dropped.fingerprint {
				t.Errorf("discarded fingerprint %s, spooled %s", dropped.fingerprint, kept.fingerprint)
			}
		})
	}
	refused := map[string]struct{ body, ct string }{}
	b, ct := form(t, "b", field("colour", "red"))
	refused["unknown name"] = struct{ body, ct string }{b, ct}
	b, ct = form(t, "b", file("file", "a", "", big(600<<10)))
	refused["truncated"] = struct{ body, ct string }{b[:len(b)/2], ct}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, rules)
			kept, dropped := h.do(t, tc.body, tc.ct), h.discard(t, tc.body, tc.ct)
			if kept.status != 400 || dropped.status != kept.status || dropped.code != kept.code || dropped.field != kept.field {
				t.Errorf("discarded: %d %s %q; spooled: %d %s %q", dropped.status, dropped.code, dropped.field, kept.status, kept.code, kept.field)
			}
		})
	}
}
