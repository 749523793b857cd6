// Package attachmentview is an attachment's public shape, in one place: the JSON the
// upload and list responses and the attachment.created event show.
package attachmentview

import (
	"time"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/ids"
)

// Attachment is an attachment as the API shows it.
type Attachment struct {
	ID          string    `json:"id"`
	RiskID      string    `json:"riskId"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"` // bytes
	SHA256      string    `json:"sha256"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	// Livemode is false for an attachment in the tenant's sandbox (docs/sandboxes.md).
	Livemode bool `json:"livemode"`
}

// Of returns a as the API shows it.
func Of(a *attachments.Attachment) Attachment {
	return Attachment{ID: a.ID, RiskID: a.RiskID, Filename: a.Filename,
		ContentType: a.ContentType, Size: a.Size, SHA256: a.SHA256,
		Description: a.Description, CreatedAt: a.CreatedAt.UTC(), Livemode: ids.Livemode(a.TenantID)}
}

// Resource implements changes.View.
func (Attachment) Resource() string { return "attachment" }

// OfRisk implements changes.OfRisk: an attachment's upload and deletion are part
// of its risk's history.
func (a Attachment) OfRisk() string { return a.RiskID }
