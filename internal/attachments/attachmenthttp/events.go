package attachmenthttp

import (
	"context"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/events"
)

// Emitting returns s with Create also emitting attachment.created through e,
// carrying the attachment as this API shows it (docs/events.md), in the upload's
// transaction: the event commits or rolls back with the row. Create must run inside
// that transaction (the upload handler's unit of work); outside one it fails with
// events.ErrNoUnitOfWork rather than risk an event without its row.
func Emitting(s attachments.Store, e *events.Emitter) attachments.Store { return emitting{s, e} }

type emitting struct {
	attachments.Store
	e *events.Emitter
}

// Create inserts a and emits attachment.created.
func (m emitting) Create(ctx context.Context, a *attachments.Attachment) error {
	if err := m.Store.Create(ctx, a); err != nil {
		return err
	}
	_, err := m.e.Emit(ctx, a.TenantID, events.AttachmentCreated, toResponse(a))
	return err
}
