package upload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/logfield"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// readBufferSize sits between the request body and the multipart parser, whose own
// buffer is only 4 KiB: with it the body is read from the connection in large reads
// instead of one system call per 4 KiB.
const readBufferSize = 256 << 10

// maxContentTypeBytes bounds a file part's Content-Type (it is stored with the file).
const maxContentTypeBytes = 255

// spool is one request's spooling state: the memoised outcome and every temporary
// file it created, so the end of the request can remove them.
type spool struct {
	cfg      *Config
	done     bool
	form     *Form
	err      error
	files    []*File
	dropping bool // files are hashed and dropped, never written (discard)
}

// read parses req's body into a Form once; later calls return the same outcome.
func (s *spool) read(req *http.Request) (*Form, error) {
	if !s.done {
		s.form, s.err = s.parse(req)
		s.done = true
	}
	return s.form, s.err
}

// errDiscarded is FormOf's error once the body was hashed and dropped (discard).
var errDiscarded = errors.New("upload: the body was hashed without being kept; the handler cannot read it")

// discard reads req's body once, as read does, but hashes each file and drops its
// bytes: the form returned has every part, each file with its name, type, size and
// SHA-256, and no file behind it. Later reads fail with errDiscarded. The log line
// ("upload hashed") has the shape of read's.
func (s *spool) discard(req *http.Request) (*Form, error) {
	if s.done {
		return nil, errors.New("upload: the body was read already")
	}
	s.dropping, s.done, s.err = true, true, errDiscarded
	start := time.Now()
	form, err := s.parse(req)
	if err == nil {
		s.cfg.Logger.LogAttrs(req.Context(), slog.LevelInfo, "upload hashed",
			slog.Int("parts", len(form.Parts)), slog.Int64("bytes", form.Size()),
			logfield.Duration(time.Since(start)))
	}
	return form, err
}

// cleanup removes the temporary files that were not moved into place.
func (s *spool) cleanup() {
	for _, f := range s.files {
		if f.placed {
			continue
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.cfg.Logger.Warn("upload: could not remove a temporary file", "path", f.path, "error", err.Error())
		}
	}
	s.files = nil
}

func (s *spool) parse(req *http.Request) (*Form, error) {
	mt, params, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEMultipartForm || params["boundary"] == "" {
		return nil, problem.Invalid("body", "must be multipart/form-data with a boundary")
	}
	mr := multipart.NewReader(bufio.NewReaderSize(req.Body, readBufferSize), params["boundary"])
	form := &Form{}
	count := map[string]int{}
	for {
		p, err := mr.NextPart()
		// Only a bare io.EOF is the closing boundary; a body that ends before it comes
		// wrapped ("multipart: NextPart: EOF") and is malformed.
		if err == io.EOF { //nolint:errorlint // see above
			return form, nil
		}
		if err != nil {
			return nil, bodyError(err)
		}
		if len(form.Parts) == s.cfg.MaxParts {
			return nil, problem.Invalid("body", fmt.Sprintf("has more than %d parts", s.cfg.MaxParts))
		}
		part, err := s.readPart(p, count)
		p.Close()
		if err != nil {
			return nil, err
		}
		form.Parts = append(form.Parts, part)
	}
}

// readPart checks p against the rules and reads it: a field into memory, a file into
// a temporary file.
func (s *spool) readPart(p *multipart.Part, count map[string]int) (Part, error) {
	disp, dparams, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	name := dparams["name"]
	if err != nil || disp != "form-data" || name == "" {
		return Part{}, problem.Invalid("body", "every part needs a Content-Disposition: form-data header with a name")
	}
	filename, isFile := dparams["filename"]
	shown := fieldName(name)
	if s.cfg.Rules != nil {
		rule, ok := s.cfg.Rules[name]
		switch {
		case !ok:
			return Part{}, problem.Invalid(shown, "is not a known form field")
		case rule.File && !isFile:
			return Part{}, problem.Invalid(shown, "must be a file part (with a filename)")
		case !rule.File && isFile:
			return Part{}, problem.Invalid(shown, "must be a plain form field, not a file")
		case count[name] >= max(rule.Max, 1):
			return Part{}, problem.Invalid(shown, fmt.Sprintf("may be sent at most %d time(s)", max(rule.Max, 1)))
		}
	}
	count[name]++
	if !isFile {
		v, err := io.ReadAll(io.LimitReader(p, s.cfg.MaxFieldBytes+1))
		if err != nil {
			return Part{}, bodyError(err)
		}
		if int64(len(v)) > s.cfg.MaxFieldBytes {
			return Part{}, problem.Invalid(shown, fmt.Sprintf("is longer than %d bytes", s.cfg.MaxFieldBytes))
		}
		return Part{Name: name, Value: string(v)}, nil
	}
	ct, err := contentType(p.Header.Get(echo.HeaderContentType))
	if err != nil {
		return Part{}, problem.Invalid(shown, err.Error())
	}
	f := &File{Field: name, Filename: filename, ContentType: ct}
	if err := s.spoolFile(f, p); err != nil {
		return Part{}, err
	}
	return Part{Name: name, File: f}, nil
}

// spoolFile writes p's bytes to a new temporary file while hashing them; when the
// spool discards, it only hashes them.
func (s *spool) spoolFile(f *File, p io.Reader) error {
	if s.dropping {
		n, sum, err := copyHashed(io.Discard, p)
		if err != nil {
			return bodyError(err)
		}
		f.Size, f.SHA256 = n, sum
		return nil
	}
	if err := os.MkdirAll(s.cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("create spool folder: %w", err)
	}
	tmp, err := os.CreateTemp(s.cfg.Dir, "upload-*")
	if err != nil {
		return fmt.Errorf("create spool file: %w", err)
	}
	f.path = tmp.Name()
	s.files = append(s.files, f) // from here on, the end of the request removes it
	n, sum, err := copyHashed(tmp, p)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close spool file: %w", cerr)
	}
	if err != nil {
		_ = os.Remove(f.path) // at once: a large partial file should not wait
		return bodyError(err)
	}
	f.Size, f.SHA256 = n, sum
	return nil
}

// contentType normalises a file part's Content-Type (application/octet-stream when
// absent, RFC 7578 section 4.4).
func contentType(v string) (string, error) {
	if v == "" {
		return "application/octet-stream", nil
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		return "", errors.New("has an invalid Content-Type")
	}
	ct := mime.FormatMediaType(mt, params)
	if ct == "" || len(ct) > maxContentTypeBytes {
		return "", errors.New("has an invalid or overlong Content-Type")
	}
	return ct, nil
}

// bodyError turns a failure to read the body into what the client sees: a malformed
// multipart body is 400 here; the spool's own file system failing is returned as it
// is (a full disk is 503 STORE_UNAVAILABLE at the edge, docs/errors.md; anything else
// 500); everything else — past the body limit, the client hanging up — is answered
// by reqbody.Error, as for every other body.
func bodyError(err error) error {
	var header textproto.ProtocolError
	if errors.As(err, &header) {
		return problem.Invalid("body", partHeaderDetail(string(header)))
	}
	if problem.As(err) == nil && isMultipartSyntax(err) {
		return problem.Invalid("body", "is not a complete multipart/form-data body")
	}
	var pe *os.PathError
	if errors.As(err, &pe) && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err // the spool's own file system
	}
	return reqbody.Error(err)
}

// partHeaderDetail says which part header the reader refused (textproto's
// "malformed MIME header line: …"), by its name when that is a plain token; the
// line itself is not echoed, as it holds the bad byte.
func partHeaderDetail(msg string) string {
	line := msg
	if i := strings.Index(msg, ": "); i >= 0 {
		line, _ = strconv.Unquote(msg[i+2:])
	}
	name, _, _ := strings.Cut(line, ":")
	if name == "" || len(name) > 64 || strings.IndexFunc(name, func(r rune) bool {
		return !(r == '-' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z')
	}) >= 0 {
		return "has a malformed part header: a NUL or other control byte, or a line that is no header"
	}
	return "has a malformed part header " + name + ": a NUL or other control byte in its value, or no value"
}

func isMultipartSyntax(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if msg := e.Error(); len(msg) > 10 && msg[:10] == "multipart:" {
			return true
		}
	}
	return false
}

// fieldName is a client-sent form name made safe to echo in a problem: valid UTF-8,
// at most 100 bytes.
func fieldName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if len(name) > 100 {
		cut := 100
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	return name
}
