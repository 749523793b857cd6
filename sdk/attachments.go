package riskapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// AttachmentsService manages files attached to risks. Reach it as
// Client.Attachments.
type AttachmentsService service

// Attachment describes a stored file; its bytes are fetched with Download.
type Attachment struct {
	// ID is the server-assigned id, "att_…".
	ID string `json:"id"`
	// RiskID is the risk the file belongs to.
	RiskID string `json:"riskId"`
	// Filename is the name given at upload.
	Filename string `json:"filename"`
	// ContentType is the MIME type given at upload.
	ContentType string `json:"contentType"`
	// Size is the length of the file in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of the file's bytes, to check a download.
	SHA256 string `json:"sha256"`
	// Description is the text given at upload; empty when none.
	Description string `json:"description"`
	// CreatedAt is when the file was stored (server clock).
	CreatedAt time.Time `json:"createdAt"`
	// Livemode is false for test data: the tenant's sandbox, which test keys
	// (rk_test_…) reach (docs/sandboxes.md).
	Livemode bool `json:"livemode"`

	// LastResponse describes the HTTP exchange that returned this
	// attachment (for items of a list, the exchange of their page).
	LastResponse *APIResponse `json:"-"`
}

// AttachmentUploadParams describe a file to upload. Because a retry must send
// the file again, the SDK needs a source it can read from the start on every
// attempt: give either File (with Size) or Open. The bytes are streamed, never
// held in memory whole, so files of any size the server accepts can be sent.
type AttachmentUploadParams struct {
	Params

	// File is read from offset 0 to Size on each attempt. *os.File,
	// *bytes.Reader and *strings.Reader qualify. ReadAt may be called
	// again for a retry, never concurrently by two attempts.
	File io.ReaderAt
	// Size is the number of bytes of File to send. When it is 0, the SDK
	// asks File: Size() (*bytes.Reader, *strings.Reader,
	// *io.SectionReader) or Stat() (*os.File); failing both, File is read
	// up to EOF and sent chunked. With Open, a positive Size lets the SDK
	// send a Content-Length; otherwise the body is chunked. Must not be
	// negative.
	Size int64
	// Open, used when File is nil, returns a fresh reader of the whole file;
	// it is called once per attempt and the reader is closed after it.
	Open func() (io.ReadCloser, error)

	// Filename is the file's name as stored by the server; required.
	Filename string
	// ContentType is the file's MIME type; default
	// "application/octet-stream".
	ContentType string
	// Description is sent as the form field "description" when not empty.
	Description string
}

// errSourceSize reports an upload source that did not hold Size bytes; the
// request is then malformed and must not be retried.
var errSourceSize = errors.New("upload source length differs from Size")

// Upload attaches a file to the risk riskID (POST /v2/risks/{id}/attachments,
// multipart part "file" and field "description", answered 201). The call is
// keyed like every write: a retry after a lost response gets the stored
// attachment back instead of storing the file twice.
//
// Errors: a plain error for invalid params or a source that cannot be read
// (not retried); *Error with 404 NOT_FOUND for an unknown risk, 413
// PAYLOAD_TOO_LARGE over the server's limit, 400 VALIDATION_FAILED.
func (s *AttachmentsService) Upload(ctx context.Context, riskID string, p *AttachmentUploadParams) (*Attachment, error) {
	if riskID == "" {
		return nil, errEmptyID
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("riskapi: Attachments.Upload: %w", err)
	}
	size := p.Size
	if p.File != nil && size == 0 {
		size = sizeOf(p.File)
	}
	known := size > 0 || (size == 0 && p.File != nil)
	if !known {
		size = -1
	}
	contentType := p.ContentType
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	form := uploadForm{
		boundary:    multipart.NewWriter(nil).Boundary(),
		filename:    p.Filename,
		contentType: contentType,
		description: p.Description,
	}
	length := int64(-1)
	if known {
		length = form.length(size)
	}
	r := &request{
		method:      http.MethodPost,
		path:        riskPath(riskID) + "/attachments",
		params:      &p.Params,
		contentType: form.formContentType(),
		body: func() (io.ReadCloser, int64, func() error, error) {
			var src io.Reader
			var closer io.Closer
			if p.File != nil {
				n := size
				if n < 0 {
					n = math.MaxInt64 // size unknown: read up to EOF
				}
				src = io.NewSectionReader(p.File, 0, n)
			} else {
				rc, err := p.Open()
				if err != nil {
					return nil, 0, nil, fmt.Errorf("open upload source: %w", err)
				}
				if rc == nil {
					return nil, 0, nil, errors.New("open upload source: Open returned a nil reader")
				}
				src, closer = rc, rc
			}
			body, finish := form.stream(src, closer, size)
			return body, length, finish, nil
		},
	}
	a := new(Attachment)
	var info *APIResponse
	err := s.client.call(ctx, r, func(resp *http.Response, ri *APIResponse) error {
		info = ri
		return decodeBody(resp, a)
	})
	if err != nil {
		return nil, err
	}
	a.LastResponse = info
	return a, nil
}

// sizeOf finds the length of a ReaderAt that knows it (*bytes.Reader,
// *strings.Reader, *io.SectionReader have Size; *os.File has Stat), or
// returns -1: the file is then read up to EOF and sent chunked.
func sizeOf(r io.ReaderAt) int64 {
	switch f := r.(type) {
	case interface{ Size() int64 }:
		return f.Size()
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return -1
}

func (p *AttachmentUploadParams) validate() error {
	switch {
	case p == nil:
		return errors.New("nil params")
	case p.File == nil && p.Open == nil:
		return errors.New("neither File nor Open is set")
	case p.File != nil && p.Open != nil:
		return errors.New("both File and Open are set")
	case p.Size < 0:
		return fmt.Errorf("negative Size %d", p.Size)
	case p.Filename == "":
		return errors.New("empty Filename")
	case hasControl(p.Filename), hasControl(p.ContentType):
		// They go into part headers, where a line break would forge
		// headers of its own.
		return errors.New("Filename or ContentType contains control characters")
	}
	return nil
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0
}

// uploadForm is the fixed part of an upload's multipart body. The boundary is
// chosen once per call, so every attempt sends byte-identical bodies.
type uploadForm struct {
	boundary, filename, contentType, description string
}

func (f *uploadForm) formContentType() string {
	w := multipart.NewWriter(nil)
	_ = w.SetBoundary(f.boundary)
	return w.FormDataContentType()
}

// write writes the multipart body to w, the file's bytes by copying src,
// which must yield exactly size bytes when size >= 0. Errors of src come back
// wrapped in *sourceError.
func (f *uploadForm) write(w io.Writer, src io.Reader, size int64) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(f.boundary); err != nil {
		return err
	}
	// The description goes first so that a server reading the stream
	// sees it before the (possibly large) file.
	if f.description != "" {
		if err := mw.WriteField("description", f.description); err != nil {
			return err
		}
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", multipart.FileContentDisposition("file", f.filename))
	h.Set("Content-Type", f.contentType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if src != nil {
		sr := &sourceReader{r: src}
		n, err := io.Copy(part, sr)
		if sr.err != nil {
			return &sourceError{sr.err}
		}
		if err != nil {
			return err
		}
		if size >= 0 && n != size {
			return &sourceError{fmt.Errorf("%w: got %d bytes, want %d", errSourceSize, n, size)}
		}
	}
	return mw.Close()
}

// length computes the exact body length for a file of size bytes, by
// writing the form without the file to a counter: multipart framing is
// deterministic once the boundary is fixed. Knowing it lets the request carry
// a Content-Length, so the server can refuse an oversized upload at once.
func (f *uploadForm) length(size int64) int64 {
	var cw countingWriter
	_ = f.write(&cw, nil, -1)
	return cw.n + size
}

// stream starts writing the body into a pipe and returns its reading end.
// Nothing is buffered beyond the pipe's hand-off, so memory stays flat
// whatever the file size. finish closes the pipe, waits for the writer to
// stop and returns an error of the source, if it had one.
func (f *uploadForm) stream(src io.Reader, closer io.Closer, size int64) (io.ReadCloser, func() error) {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	var srcErr error
	go func() {
		defer close(done)
		if closer != nil {
			defer closer.Close()
		}
		err := f.write(pw, src, size)
		var se *sourceError
		if errors.As(err, &se) {
			srcErr = se.err
		}
		pw.CloseWithError(err) // nil closes with io.EOF: the body is complete
	}()
	finish := func() error {
		pr.Close()
		<-done
		if srcErr != nil {
			return fmt.Errorf("read upload source: %w", srcErr)
		}
		return nil
	}
	return pr, finish
}

// sourceReader remembers the error of the upload source, telling it apart from
// errors of the pipe it is copied into.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// List returns the attachments of the risk riskID as a sequence (GET
// /v2/risks/{id}/attachments), following pages if the server pages them. On
// error it yields (nil, err) once and ends.
//
// Errors: *Error with 404 NOT_FOUND for an unknown risk.
func (s *AttachmentsService) List(ctx context.Context, riskID string) iter.Seq2[*Attachment, error] {
	return paginate(ctx, "", func(ctx context.Context, cursor string) (*Page[Attachment], error) {
		if riskID == "" {
			return nil, errEmptyID
		}
		q := url.Values{}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		return getPage[Attachment](ctx, s.client, riskPath(riskID)+"/attachments", q, nil)
	})
}

func (a *Attachment) setLastResponse(info *APIResponse) { a.LastResponse = info }

// AttachmentContent is a download in progress: read the file from it (or its
// Body) and close it. It is an io.ReadCloser.
type AttachmentContent struct {
	// Body streams the file's bytes; the caller must close it.
	Body io.ReadCloser
	// ContentType is the Content-Type the server sent, the MIME type given
	// at upload.
	ContentType string
	// ContentLength is the announced length in bytes, -1 if unknown.
	ContentLength int64
	// LastResponse describes the HTTP exchange.
	LastResponse *APIResponse
}

// Read reads from Body.
func (a *AttachmentContent) Read(p []byte) (int, error) { return a.Body.Read(p) }

// Close closes Body, releasing the connection.
func (a *AttachmentContent) Close() error { return a.Body.Close() }

// Download opens the bytes of the attachment attachmentID (GET
// /v2/attachments/{id}/content). The call is retried until the response
// headers arrive; the body is then streamed to the caller, and an error while
// reading it (the connection breaking off) is returned by Read, not retried:
// download again, and compare with Attachment.SHA256 if in doubt. ctx must
// stay live until the body is read.
//
// Errors: *Error with 404 NOT_FOUND.
func (s *AttachmentsService) Download(ctx context.Context, attachmentID string) (*AttachmentContent, error) {
	if attachmentID == "" {
		return nil, errEmptyID
	}
	r := &request{
		method: http.MethodGet,
		path:   "/v2/attachments/" + url.PathEscape(attachmentID) + "/content",
		accept: "*/*",
	}
	var out *AttachmentContent
	err := s.client.call(ctx, r, func(resp *http.Response, info *APIResponse) error {
		out = &AttachmentContent{
			Body:          resp.Body,
			ContentType:   resp.Header.Get("Content-Type"),
			ContentLength: resp.ContentLength,
			LastResponse:  info,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
