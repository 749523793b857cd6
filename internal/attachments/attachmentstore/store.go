// Package attachmentstore stores attachment rows with GORM on SQLite or PostgreSQL.
// Its row type and GORM tags stay here; the domain type knows nothing of them.
package attachmentstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/attachments/attachmentview"
	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/risks"
)

// Store implements attachments.Store. Create records attachment.created, with the
// attachment as attachmentview shows it, through its changes.Point in the upload's
// unit of work.
type Store struct {
	db      *gorm.DB
	dialect database.Dialect
	point   changes.Point
}

var _ attachments.Store = (*Store)(nil)

// New returns a Store over db whose writes record through rec (required: without it
// Create fails with changes.ErrNoRecorder). The table comes from riskapi's migrations.
func New(db *database.DB, rec changes.Recorder) *Store {
	return &Store{db: db.DB, dialect: db.Dialect, point: changes.Point{Tx: database.NewRunner(db.DB), Recorder: rec}}
}

type row struct {
	ID          string
	TenantID    string
	RiskID      string
	Filename    string
	ContentType string
	Size        int64
	SHA256      string `gorm:"column:sha256"`
	Description string
	CreatedAt   time.Time
}

func (row) TableName() string { return "attachments" }

func toRow(a *attachments.Attachment) *row {
	return &row{ID: a.ID, TenantID: a.TenantID, RiskID: a.RiskID, Filename: a.Filename,
		ContentType: a.ContentType, Size: a.Size, SHA256: a.SHA256, Description: a.Description,
		CreatedAt: a.CreatedAt.UTC()}
}

func toAttachment(w *row) *attachments.Attachment {
	return &attachments.Attachment{ID: w.ID, TenantID: w.TenantID, RiskID: w.RiskID,
		Filename: w.Filename, ContentType: w.ContentType, Size: w.Size, SHA256: w.SHA256,
		Description: w.Description, CreatedAt: w.CreatedAt.UTC()}
}

// Create inserts a if its risk is the tenant's, or returns risks.ErrNotFound, and
// records attachment.created. On
// PostgreSQL the risk row is locked FOR KEY SHARE until commit — the lock a foreign
// key would take —, so a concurrent delete of the risk waits and then removes this
// row too (risks.Service.Delete). SQLite needs no lock: its writers take turns.
func (s *Store) Create(ctx context.Context, a *attachments.Attachment) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		if err := s.insert(ctx, a); err != nil {
			return changes.Change{}, err
		}
		return changes.Change{TenantID: a.TenantID, Action: changes.AttachmentCreated,
			Target: changes.Target{Type: "attachment", ID: a.ID}, After: attachmentview.Of(a)}, nil
	})
}

func (s *Store) insert(ctx context.Context, a *attachments.Attachment) error {
	q := s.tenant(ctx, a.TenantID).Table("risks").Scopes(database.Published(a.TenantID, "import_id")).Where("id = ?", a.RiskID)
	if s.dialect == database.Postgres {
		q = q.Clauses(clause.Locking{Strength: "KEY SHARE"})
	}
	var found []string
	if err := q.Pluck("id", &found).Error; err != nil {
		return fmt.Errorf("create attachment: find risk: %w", err)
	}
	if len(found) == 0 {
		return risks.ErrNotFound
	}
	if err := database.Conn(ctx, s.db).Create(toRow(a)).Error; err != nil {
		return fmt.Errorf("create attachment: %w", err)
	}
	return nil
}

// tenant is a statement on the tenant's rows only, in ctx's unit of work.
func (s *Store) tenant(ctx context.Context, tenantID string) *gorm.DB {
	return database.Conn(ctx, s.db).Scopes(database.OfTenant(tenantID))
}

// Get returns the tenant's attachment with id, or attachments.ErrNotFound.
func (s *Store) Get(ctx context.Context, tenantID, id string) (*attachments.Attachment, error) {
	var w row
	err := s.tenant(ctx, tenantID).Where("id = ?", id).Take(&w).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, attachments.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get attachment %s: %w", id, err)
	}
	return toAttachment(&w), nil
}

// List returns up to f.Limit of the risk's attachments oldest first (IDs are UUIDv7,
// so ID order is creation order), and whether more follow.
func (s *Store) List(ctx context.Context, tenantID, riskID string, f attachments.Filter) ([]*attachments.Attachment, bool, error) {
	q := s.tenant(ctx, tenantID).Where("risk_id = ?", riskID)
	out, more, err := database.Page(q, database.OldestFirst, f.After, f.Limit, toAttachment)
	if err != nil {
		return nil, false, fmt.Errorf("list attachments: %w", err)
	}
	return out, more, nil
}

// Delete removes a's row and records attachment.deleted, in one unit of work;
// attachments.ErrNotFound when there is no such row (any more).
func (s *Store) Delete(ctx context.Context, a *attachments.Attachment) error {
	return s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
		res := s.tenant(ctx, a.TenantID).Where("id = ?", a.ID).Delete(&row{})
		if res.Error != nil {
			return changes.Change{}, fmt.Errorf("delete attachment %s: %w", a.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			return changes.Change{}, attachments.ErrNotFound
		}
		return changes.Change{TenantID: a.TenantID, Action: changes.AttachmentDeleted,
			Target: changes.Target{Type: "attachment", ID: a.ID}, Before: attachmentview.Of(a)}, nil
	})
}

// DeleteByRisk removes the rows of the risk's attachments, recording
// attachment.deleted for each with the attachment as it was, and returns how many.
func (s *Store) DeleteByRisk(ctx context.Context, tenantID, riskID string) (int, error) {
	var rows []row
	if err := s.tenant(ctx, tenantID).Where("risk_id = ?", riskID).Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("read attachments of risk %s: %w", riskID, err)
	}
	n := 0
	for i := range rows {
		a := toAttachment(&rows[i])
		err := s.point.Write(ctx, func(ctx context.Context) (changes.Change, error) {
			res := s.tenant(ctx, tenantID).Where("id = ?", a.ID).Delete(&row{})
			if res.Error != nil {
				return changes.Change{}, fmt.Errorf("delete attachment %s: %w", a.ID, res.Error)
			}
			n += int(res.RowsAffected)
			return changes.Change{TenantID: tenantID, Action: changes.AttachmentDeleted,
				Target: changes.Target{Type: "attachment", ID: a.ID}, Before: attachmentview.Of(a)}, nil
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Existing returns which of ids are the IDs of the tenant's attachments.
func (s *Store) Existing(ctx context.Context, tenantID string, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var found []string
	err := s.tenant(ctx, tenantID).Model(&row{}).Where("id IN ?", ids).
		Pluck("id", &found).Error
	if err != nil {
		return nil, fmt.Errorf("find attachments: %w", err)
	}
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
