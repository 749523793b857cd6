// Package attachments is the domain of files attached to risks: the Attachment type
// and its validation (a client's filename is a label, never a path), where the bytes
// live on disk (Files), the sweep that removes bytes no row refers to (OrphanSweeper),
// and the Store interface its storage must satisfy. A Store is a risks.Dependent:
// risks.Service.Delete removes a risk's attachment rows with it, in its unit of
// work. It knows nothing of HTTP, SQL or idempotency.
package attachments

import (
	"context"
	"errors"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// Attachment is a file attached to a risk. Its bytes live in Files, not in the row.
type Attachment struct {
	ID          string    // "att_…"
	TenantID    string    // the owner; every lookup is scoped to it
	RiskID      string    // the risk it is attached to, of the same tenant
	Filename    string    // sanitised: a base name, no control characters, 1–255 bytes
	ContentType string    // the MIME type given at upload, normalised
	Size        int64     // bytes
	SHA256      string    // lowercase hex digest of the bytes
	Description string    // up to 10,000 characters
	CreatedAt   time.Time // UTC, microseconds
}

// Limits of an attachment's text fields.
const (
	MaxFilenameBytes    = 255
	MaxDescriptionChars = 10000
)

// ErrNotFound means no attachment with that ID in that tenant; another tenant's
// attachment is indistinguishable from an absent one.
var ErrNotFound = errors.New("attachment not found")

// Input is what an upload says about its file.
type Input struct {
	Filename    string // as sent by the client; sanitised by New
	ContentType string // the part's normalised MIME type
	Size        int64  // bytes
	SHA256      string // lowercase hex digest of the bytes
	Description string // the form's description field, unchecked
}

// New validates in and returns the attachment id of tenantID's risk riskID, created
// at now. Errors: *problem.Problem VALIDATION_FAILED naming the form field at fault:
// "file" when nothing of the filename survives sanitising, "description" when it is
// not UTF-8 or too long.
func New(id, tenantID, riskID string, in Input, now time.Time) (*Attachment, error) {
	var errs []problem.FieldError
	name := SanitizeFilename(in.Filename)
	if name == "" {
		errs = append(errs, problem.FieldError{Field: "file", Detail: "needs a filename"})
	}
	switch {
	case !utf8.ValidString(in.Description):
		errs = append(errs, problem.FieldError{Field: "description", Detail: "must be UTF-8 text"})
	case strings.ContainsRune(in.Description, 0):
		// PostgreSQL text cannot hold NUL; refuse it on every store alike.
		errs = append(errs, problem.FieldError{Field: "description", Detail: "must not contain the NUL character"})
	case utf8.RuneCountInString(in.Description) > MaxDescriptionChars:
		errs = append(errs, problem.FieldError{Field: "description", Detail: "must be at most 10000 characters"})
	}
	if !utf8.ValidString(in.ContentType) || strings.ContainsRune(in.ContentType, 0) {
		errs = append(errs, problem.FieldError{Field: "file", Detail: "has an invalid Content-Type"})
	}
	if p := problem.Fields(errs); p != nil {
		return nil, p
	}
	return &Attachment{ID: id, TenantID: tenantID, RiskID: riskID, Filename: name,
		ContentType: in.ContentType, Size: in.Size, SHA256: in.SHA256,
		Description: in.Description, CreatedAt: now}, nil
}

// SanitizeFilename reduces a client's filename to a label safe to store and to show:
// the last element of any path (either slash), invalid UTF-8 replaced, control and
// invisible formatting characters (such as right-to-left overrides that disguise an
// extension) removed, surrounding spaces trimmed, "." and ".." refused, and at most
// 255 bytes, cut on a character boundary. It returns "" when nothing is left. The
// result is still never used as a path: bytes are stored under the attachment's ID.
func SanitizeFilename(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = strings.ReplaceAll(name, `\`, "/")
	name = path.Base("/" + name)
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "." || name == ".." || name == "/" {
		return ""
	}
	if len(name) > MaxFilenameBytes {
		cut := MaxFilenameBytes
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = strings.TrimSpace(name[:cut])
	}
	return name
}

// Filter selects a page of a risk's attachments, oldest first.
type Filter struct {
	// Limit is the page size, 1–100.
	Limit int
	// After, when set, returns only attachments newer than the one with this ID (the
	// cursor of the previous page).
	After string
}

// Store persists attachment rows. Every method is scoped to a tenant and writes
// through the transaction its context carries, if any (see internal/database.Conn).
// Create records its change at the recording point, in its unit of work.
type Store interface {
	// Create inserts a, provided its risk is the tenant's, or returns
	// risks.ErrNotFound. Inside a transaction it also keeps the risk from being
	// deleted until commit, so no row can outlive its risk.
	Create(ctx context.Context, a *Attachment) error
	// Get returns the tenant's attachment with id, or ErrNotFound.
	Get(ctx context.Context, tenantID, id string) (*Attachment, error)
	// List returns up to f.Limit of the risk's attachments oldest first, and whether
	// more follow.
	List(ctx context.Context, tenantID, riskID string, f Filter) ([]*Attachment, bool, error)
	// Delete removes a's row and records attachment.deleted with a as it was; the
	// bytes are left to the OrphanSweeper. Errors: ErrNotFound when the row is gone.
	Delete(ctx context.Context, a *Attachment) error
	// DeleteByRisk removes the rows of the risk's attachments and returns how many.
	DeleteByRisk(ctx context.Context, tenantID, riskID string) (int, error)
	// Existing returns which of ids are the IDs of the tenant's attachments.
	Existing(ctx context.Context, tenantID string, ids []string) (map[string]bool, error)
}

// A risk's attachment rows go with it (risks.Service.Dependents). Their bytes are
// left to the OrphanSweeper, which removes them once the deletion has committed and
// the grace period has passed: removing them with the rows could destroy the files
// of a deletion that then rolls back.
var _ risks.Dependent = Store(nil)
