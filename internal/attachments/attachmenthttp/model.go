package attachmenthttp

import (
	"time"

	"github.com/riskapi/riskapi/internal/attachments"
)

// attachmentResponse is an attachment as the API shows it.
type attachmentResponse struct {
	ID          string    `json:"id"`
	RiskID      string    `json:"riskId"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
}

func toResponse(a *attachments.Attachment) attachmentResponse {
	return attachmentResponse{ID: a.ID, RiskID: a.RiskID, Filename: a.Filename,
		ContentType: a.ContentType, Size: a.Size, SHA256: a.SHA256,
		Description: a.Description, CreatedAt: a.CreatedAt.UTC()}
}
