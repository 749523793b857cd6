// Package attachmenthttp is the HTTP adapter of attachments: upload (multipart, read
// through internal/upload), list and download, mounted identically under /v1 and /v2.
// Authentication, scopes, body limits, spooling and idempotency are middleware around
// it; these handlers only speak attachments.
package attachmenthttp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/auth"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/upload"
)

// FormRules are the form names the upload route accepts, for the spooling middleware
// (upload.Config.Rules): one file part "file" and at most one field "description".
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
	// Files is where the bytes go. Required.
	Files attachments.Files
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
}

// Page sizes of GET /risks/{id}/attachments.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

type handlers struct {
	Config
}

// Routes mounts the attachment routes on g, whose middleware must already
// authenticate (auth.FromContext yields the tenant) and, for the upload route, spool
// the form (upload.Config with FormRules).
func Routes(g *echo.Group, cfg Config, m ...echo.MiddlewareFunc) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := handlers{cfg}
	g.POST("/risks/:id/attachments", h.upload, m...)
	g.GET("/risks/:id/attachments", h.list, m...)
	g.GET("/attachments/:id/content", h.content, m...)
}

func tenantOf(c echo.Context) string { return auth.FromContext(c.Request().Context()).TenantID }

// timestamp truncates to microseconds, what PostgreSQL keeps, so a listed attachment
// reads back exactly as the upload returned it.
func (h handlers) timestamp() time.Time { return h.Now().UTC().Truncate(time.Microsecond) }

func (h handlers) upload(c echo.Context) error {
	ctx := c.Request().Context()
	tenant, riskID := tenantOf(c), c.Param("id")
	// Before reading the body: a missing risk then costs no disk writes (unless the
	// idempotency fingerprint has spooled the form already).
	if err := h.riskExists(c, riskID); err != nil {
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
	err = h.Store.InTx(ctx, func(ctx context.Context) error {
		if err := h.Store.Create(ctx, a); err != nil {
			return err
		}
		// Last: if the transaction then fails, the file is an orphan for the sweep;
		// never the reverse, a row without its bytes.
		return f.MoveTo(dst)
	})
	if err != nil {
		return notFound(err)
	}
	c.Response().Header().Set(echo.HeaderLocation, versionPrefix(c)+"/attachments/"+a.ID+"/content")
	return c.JSON(http.StatusCreated, toResponse(a))
}

func (h handlers) list(c echo.Context) error {
	f := attachments.Filter{Limit: DefaultLimit}
	if s := c.QueryParam("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return problem.Invalid("limit", fmt.Sprintf("must be an integer from 1 to %d", MaxLimit))
		}
		f.Limit = n
	}
	if s := c.QueryParam("cursor"); s != "" {
		raw, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || !ids.Valid(ids.Attachment, string(raw)) {
			return problem.Invalid("cursor", "is not a cursor this API returned")
		}
		f.After = string(raw)
	}
	riskID := c.Param("id")
	if err := h.riskExists(c, riskID); err != nil {
		return err
	}
	as, more, err := h.Store.List(c.Request().Context(), tenantOf(c), riskID, f)
	if err != nil {
		return err
	}
	resp := listResponse{Data: make([]attachmentResponse, len(as)), HasMore: more}
	for i, a := range as {
		resp.Data[i] = toResponse(a)
	}
	if more {
		next := base64.RawURLEncoding.EncodeToString([]byte(as[len(as)-1].ID))
		resp.NextCursor = &next
	}
	return c.JSON(http.StatusOK, resp)
}

// content streams the bytes with the stored content type. Range and conditional
// requests work (http.ServeContent; the ETag is the SHA-256). The headers keep a
// browser from running what it downloads on the API's origin: uploaded HTML or SVG is
// a file to save, not a page.
func (h handlers) content(c echo.Context) error {
	id := c.Param("id")
	if !ids.Valid(ids.Attachment, id) {
		return problem.New(problem.NotFound, "no such attachment")
	}
	tenant := tenantOf(c)
	a, err := h.Store.Get(c.Request().Context(), tenant, id)
	if errors.Is(err, attachments.ErrNotFound) {
		return problem.New(problem.NotFound, "no such attachment")
	}
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
	http.ServeContent(c.Response(), c.Request(), "", a.CreatedAt, fh)
	return nil
}

// riskExists answers 404 unless the risk named by riskID is the tenant's.
func (h handlers) riskExists(c echo.Context, riskID string) error {
	if !ids.Valid(ids.Risk, riskID) {
		return problem.New(problem.NotFound, "no such risk")
	}
	_, err := h.Risks.Get(c.Request().Context(), tenantOf(c), riskID)
	return notFound(err)
}

func notFound(err error) error {
	if errors.Is(err, risks.ErrNotFound) {
		return problem.New(problem.NotFound, "no such risk")
	}
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
