// Package attachmenthttp is the HTTP adapter of attachments: upload (multipart, read
// through internal/upload), list and download, served identically under /v1 and /v2,
// each route declaring its policy (route.Route). The server turns the policy into
// middleware (body limit, spooling, authentication, scope, idempotency); these
// handlers only speak attachments.
package attachmenthttp

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/attachments/attachmentview"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/route"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/upload"
)

// FormRules are the form names the upload route accepts (its route.Body.Form, the
// spooling middleware's rules): one file part "file" and at most one field
// "description".
// Any other name is refused with 400 before its bytes are stored.
var FormRules = map[string]upload.Rule{
	"file":        {File: true},
	"description": {},
}

// Config wires the handlers.
type Config struct {
	// Store persists attachment rows. Required.
	Store attachments.Store
	// Risks answers whether a risk exists. Required.
	Risks risks.Store
	// Tx runs an upload's row and file move as one unit of work. Required.
	Tx risks.UnitOfWork
	// Files is where the bytes go. Required.
	Files attachments.Files
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

type handlers struct {
	Config
}

// Routes declares the attachment routes: the upload takes a multipart form up to the
// upload limit, spooled under FormRules; writes (upload, delete) honour
// Idempotency-Key and need risks:write, reads risks:read.
func Routes(cfg Config) []route.Route {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := handlers{cfg}
	read, write := tenants.ScopeRisksRead, tenants.ScopeRisksWrite
	return []route.Route{
		{Method: http.MethodPost, Path: "/risks/:id/attachments", Handler: h.upload, Versions: route.Both, Scope: write,
			Body: route.Body{Kind: route.UploadBody, Form: FormRules}},
		{Method: http.MethodGet, Path: "/risks/:id/attachments", Handler: h.list, Versions: route.Both, Scope: read},
		{Method: http.MethodGet, Path: "/attachments/:id/content", Handler: h.content, Versions: route.Both, Scope: read},
		{Method: http.MethodDelete, Path: "/attachments/:id", Handler: h.delete, Versions: route.Both, Scope: write},
	}
}

// timestamp truncates to microseconds, what PostgreSQL keeps, so a listed attachment
// reads back exactly as the upload returned it.
func (h handlers) timestamp() time.Time { return h.Now().UTC().Truncate(time.Microsecond) }

func (h handlers) upload(c echo.Context) error {
	ctx := c.Request().Context()
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	riskID := c.Param("id")
	// Before reading the body: a missing risk then costs no disk writes (unless the
	// idempotency fingerprint has spooled the form already).
	if err := h.riskExists(c, tenant, riskID); err != nil {
		return err
	}
	form, err := upload.FormOf(c)
	if err != nil {
		return err
	}
	files := form.Files("file")
	if len(files) != 1 {
		return problem.Invalid("file", "is required: send the file as the multipart part \"file\"")
	}
	f := files[0]
	var desc string
	if v := form.Values("description"); len(v) > 0 {
		desc = v[0]
	}
	a, err := attachments.New(ids.New(ids.Attachment), tenant, riskID, attachments.Input{
		Filename: f.Filename, ContentType: f.ContentType, Size: f.Size, SHA256: f.SHA256Hex(), Description: desc,
	}, h.timestamp())
	if err != nil {
		return err
	}
	dst, err := h.Files.Path(tenant, a.ID)
	if err != nil {
		return err
	}
	// Durable before any transaction of ours begins; a keyed request's has already.
	if err := f.Sync(); err != nil {
		return err
	}
	err = h.Tx.InTx(ctx, func(ctx context.Context) error {
		if err := h.Store.Create(ctx, a); err != nil {
			return err
		}
		// Last: if the transaction then fails, the file is an orphan for the sweep;
		// never the reverse, a row without its bytes.
		return f.MoveTo(dst)
	})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, versionPrefix(c)+"/attachments/"+a.ID+"/content")
	return c.JSON(http.StatusCreated, attachmentview.Of(a))
}

func (h handlers) list(c echo.Context) error {
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	p, err := route.PagingOf(c, ids.Attachment)
	if err != nil {
		return err
	}
	riskID := c.Param("id")
	if err := h.riskExists(c, tenant, riskID); err != nil {
		return err
	}
	// Oldest first: the page after the cursor holds newer attachments.
	as, more, err := h.Store.List(c.Request().Context(), tenant, riskID, attachments.Filter{Limit: p.Limit, After: p.After})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, route.NewPage(as, more, attachmentID, attachmentview.Of))
}

func attachmentID(a *attachments.Attachment) string { return a.ID }

// content streams the bytes with the stored content type. Range and conditional
// requests work (http.ServeContent; the ETag is the SHA-256). The headers keep a
// browser from running what it downloads on the API's origin: uploaded HTML or SVG is
// a file to save, not a page.
func (h handlers) content(c echo.Context) error {
	id := c.Param("id")
	if !ids.Valid(ids.Attachment, id) {
		return attachments.ErrNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	a, err := h.Store.Get(c.Request().Context(), tenant, id)
	if err != nil {
		return err
	}
	fh, err := h.Files.Open(tenant, id)
	if err != nil {
		return fmt.Errorf("open bytes of attachment %s: %w", id, err)
	}
	defer fh.Close()
	hd := c.Response().Header()
	hd.Set(echo.HeaderContentType, a.ContentType)
	hd.Set("ETag", `"`+a.SHA256+`"`)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	disp := mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename})
	if disp == "" {
		disp = "attachment"
	}
	hd.Set("Content-Disposition", disp)
	w := &refusal{ResponseWriter: c.Response().Writer}
	http.ServeContent(w, c.Request(), "", a.CreatedAt, fh)
	return w.problem()
}

// delete removes the attachment's row — its content is 404 from then on — and
// records attachment.deleted; the bytes are removed by the orphan sweep once the
// deletion has committed and the grace period passed (a rolled-back deletion keeps
// them).
func (h handlers) delete(c echo.Context) error {
	id := c.Param("id")
	if !ids.Valid(ids.Attachment, id) {
		return attachments.ErrNotFound
	}
	tenant, err := route.Tenant(c)
	if err != nil {
		return err
	}
	err = h.Tx.InTx(c.Request().Context(), func(ctx context.Context) error {
		a, err := h.Store.Get(ctx, tenant, id)
		if err != nil {
			return err
		}
		return h.Store.Delete(ctx, a)
	})
	if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// refusal stands between http.ServeContent and the client to catch the errors it
// writes itself as text/plain — 416 for a Range outside the file, 412 for a failed
// If-Match or If-Unmodified-Since — so that they reach the client as problem+json
// like every other error (docs/errors.md). Everything else passes through.
type refusal struct {
	http.ResponseWriter
	status int
}

func (r *refusal) WriteHeader(status int) {
	if status >= 400 {
		r.status = status
		return
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *refusal) Write(p []byte) (int, error) {
	if r.status != 0 {
		return len(p), nil
	}
	return r.ResponseWriter.Write(p)
}

// problem returns the refusal ServeContent wrote, nil if it served the bytes. The
// download's own headers go, except Content-Range ("bytes */size" on a 416 tells the
// client the length), so the problem is not saved as the file.
func (r *refusal) problem() error {
	if r.status == 0 {
		return nil
	}
	h := r.Header()
	for _, k := range []string{"Content-Disposition", "Content-Security-Policy", "ETag", "Last-Modified", "Accept-Ranges"} {
		h.Del(k)
	}
	switch r.status {
	case http.StatusRequestedRangeNotSatisfiable:
		return problem.New(problem.RangeNotSatisfiable, "the Range header asks for bytes outside the attachment; Content-Range gives its length")
	case http.StatusPreconditionFailed:
		return problem.New(problem.PreconditionFailed, "If-Match or If-Unmodified-Since does not hold for this attachment")
	}
	return fmt.Errorf("download answered %d", r.status)
}

// riskExists answers 404 unless the risk named by riskID is tenant's.
func (h handlers) riskExists(c echo.Context, tenant, riskID string) error {
	if !ids.Valid(ids.Risk, riskID) {
		return risks.ErrNotFound
	}
	_, err := h.Risks.Get(c.Request().Context(), tenant, riskID)
	return err
}

// versionPrefix is "/v1" or "/v2", from the matched route.
func versionPrefix(c echo.Context) string {
	p := c.Path()
	if i := strings.Index(p[1:], "/"); i >= 0 {
		return p[:i+1]
	}
	return ""
}
