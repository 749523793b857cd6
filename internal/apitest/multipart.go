package apitest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"path/filepath"
	"strings"
)

// Part is one part of a multipart/form-data body built by Multipart.
type Part struct {
	// Name is the form name.
	Name string
	// File makes it a file part, with Filename and ContentType (omitted when empty).
	File        bool
	Filename    string // the filename parameter, sent as is
	ContentType string // the part's Content-Type
	// Body is the field's value or the file's bytes.
	Body string
}

// FilePart returns a file part.
func FilePart(name, filename, contentType, body string) Part {
	return Part{Name: name, File: true, Filename: filename, ContentType: contentType, Body: body}
}

// FieldPart returns a plain field part.
func FieldPart(name, value string) Part { return Part{Name: name, Body: value} }

// Multipart encodes parts as multipart/form-data with boundary (a random one when
// empty) and returns the body and its Content-Type.
func Multipart(boundary string, parts ...Part) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if boundary != "" {
		if err := w.SetBoundary(boundary); err != nil {
			panic(err)
		}
	}
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name="%s"`, escapeQuotes(p.Name))
		if p.File {
			disp += fmt.Sprintf(`; filename="%s"`, escapeQuotes(p.Filename))
			if p.ContentType != "" {
				h.Set("Content-Type", p.ContentType)
			}
		}
		h.Set("Content-Disposition", disp)
		pw, err := w.CreatePart(h)
		if err != nil {
			panic(err)
		}
		io.WriteString(pw, p.Body)
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

func escapeQuotes(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// DoRaw sends req through the whole router, as Do does.
func (e *Env) DoRaw(req *http.Request) *Response {
	e.T.Helper()
	rec := httptest.NewRecorder()
	e.App.Echo.ServeHTTP(rec, req)
	return &Response{ResponseRecorder: rec, T: e.T}
}

// Upload POSTs a multipart body to path with bearer and the extra header (such as
// Idempotency-Key).
func (e *Env) Upload(path, bearer string, header http.Header, body []byte, contentType string) *Response {
	e.T.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for k, vs := range header {
		req.Header[textproto.CanonicalMIMEHeaderKey(k)] = vs
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return e.DoRaw(req)
}

// Server serves the router on a loopback port until the test ends, for tests that
// need a real connection (streaming uploads).
func (e *Env) Server() *httptest.Server {
	srv := httptest.NewServer(e.App.Echo)
	e.T.Cleanup(srv.Close)
	return srv
}

// StoredFiles lists the regular files under UPLOAD_DIR, relative to it (spooled
// temporary files included, under tmp/).
func (e *Env) StoredFiles() []string {
	e.T.Helper()
	root := e.App.Config.Uploads.Dir
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		e.T.Fatalf("list %s: %v", root, err)
	}
	return out
}
