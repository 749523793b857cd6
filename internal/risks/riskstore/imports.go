package riskstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/riskapi/riskapi/internal/database"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/risks"
)

// An import on SQLite writes its new risks in short transactions, hidden until
// published (risks.PendingImports; docs/register.md "Import", migration 0031).
// These methods keep its pending row and take back the rows of one that failed.

var _ risks.PendingImports = (*Store)(nil)

// takeBackBatch is how many rows of a table one transaction of a take-back
// deletes: each holds SQLite's write lock about a second at most
// (docs/performance.md, "A fair share of capacity").
const takeBackBatch = 1000

// noted are the pending imports this process hides from their tenant's reads
// (database.NoteImportPending), by ID: the function that forgets each.
var noted = struct {
	mu   sync.Mutex
	done map[string]func()
}{done: map[string]func(){}}

func note(tenantID, id string) {
	done := database.NoteImportPending(tenantID)
	noted.mu.Lock()
	if prev := noted.done[id]; prev != nil {
		prev()
	}
	noted.done[id] = done
	noted.mu.Unlock()
}

func forget(id string) {
	noted.mu.Lock()
	done := noted.done[id]
	delete(noted.done, id)
	noted.mu.Unlock()
	if done != nil {
		done()
	}
}

// ImportPending implements risks.PendingImports.
func (s *Store) ImportPending(tenantID string) bool { return database.ImportPending(tenantID) }

// BeginImport implements risks.PendingImports: on SQLite it commits a pending
// row for a new import of tenantID, outside ctx's unit of work, and returns its
// ID, hidden from the tenant's reads from then on; on PostgreSQL, whose import
// runs in one transaction, "".
func (s *Store) BeginImport(ctx context.Context, tenantID string, now time.Time) (string, error) {
	if s.postgres() {
		return "", nil
	}
	id := ids.New(ids.Risk)
	note(tenantID, id)
	err := database.Conn(database.NewRunner(s.db).Outside(ctx), s.db).
		Exec(`INSERT INTO pending_imports (id, tenant_id, created_at) VALUES (?, ?, ?)`, id, tenantID, now.UTC()).Error
	if err != nil {
		forget(id)
		return "", fmt.Errorf("begin import: %w", err)
	}
	return id, nil
}

// Marking implements risks.PendingImports: the rows written through the context
// it returns carry import id (database.WithImport).
func (s *Store) Marking(ctx context.Context, id string) context.Context {
	return database.WithImport(ctx, id)
}

// PublishImport implements risks.PendingImports: it deletes id's pending row in
// ctx's unit of work, so the import's rows are seen once that commits. Its marks
// stay, as provenance.
func (s *Store) PublishImport(ctx context.Context, id string) error {
	if err := database.Conn(ctx, s.db).Exec(`DELETE FROM pending_imports WHERE id = ?`, id).Error; err != nil {
		return fmt.Errorf("publish import: %w", err)
	}
	return nil
}

// PendingImports implements risks.PendingImports: the imports left pending by a
// process that died (read at startup), by ID with their tenant, each hidden from
// its tenant's reads from now until SettleImport takes it back.
func (s *Store) PendingImports(ctx context.Context) (map[string]string, error) {
	if s.postgres() {
		return nil, nil
	}
	var rows []struct{ ID, TenantID string }
	if err := database.Conn(ctx, s.db).Raw(`SELECT id, tenant_id FROM pending_imports`).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("pending imports: %w", err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		note(r.TenantID, r.ID)
		out[r.ID] = r.TenantID
	}
	return out, nil
}

// SettleImport implements risks.PendingImports. Called once the unit of work
// that would have published id has ended: if id is still pending it deletes its
// rows — risks (their triggers mend the heat counts and the search index, and
// no event is emitted for what was never published), events with their
// deliveries and delivery log, audit entries — takeBackBatch per transaction,
// then its pending row. Either way its tenant's reads stop filtering for it.
func (s *Store) SettleImport(ctx context.Context, id string) error {
	ctx = database.NewRunner(s.db).Outside(ctx)
	var n int64
	if err := database.Conn(ctx, s.db).Raw(`SELECT COUNT(*) FROM pending_imports WHERE id = ?`, id).Scan(&n).Error; err != nil {
		return fmt.Errorf("settle import: %w", err)
	}
	if n > 0 {
		if err := s.takeBack(ctx, id); err != nil {
			return fmt.Errorf("take back import %s: %w", id, err)
		}
	}
	forget(id)
	return nil
}

// takeBack deletes import id's rows and then its pending row.
func (s *Store) takeBack(ctx context.Context, id string) error {
	steps := []func(conn *gorm.DB) (int64, error){
		func(conn *gorm.DB) (int64, error) {
			res := conn.Exec(`DELETE FROM risks WHERE id IN (SELECT id FROM risks WHERE import_id = ? LIMIT ?)`, id, takeBackBatch)
			return res.RowsAffected, res.Error
		},
		func(conn *gorm.DB) (int64, error) {
			var evs []string
			if err := conn.Raw(`SELECT id FROM events WHERE import_id = ? LIMIT ?`, id, takeBackBatch).Scan(&evs).Error; err != nil || len(evs) == 0 {
				return 0, err
			}
			for _, table := range []string{"webhook_attempts", "webhook_deliveries"} {
				if err := conn.Exec(`DELETE FROM `+table+` WHERE event_id IN ?`, evs).Error; err != nil {
					return 0, err
				}
			}
			res := conn.Exec(`DELETE FROM events WHERE id IN ?`, evs)
			return res.RowsAffected, res.Error
		},
		func(conn *gorm.DB) (int64, error) {
			res := conn.Exec(`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE import_id = ? LIMIT ?)`, id, takeBackBatch)
			return res.RowsAffected, res.Error
		},
		func(conn *gorm.DB) (int64, error) {
			return 0, conn.Exec(`DELETE FROM pending_imports WHERE id = ?`, id).Error
		},
	}
	for _, step := range steps {
		for {
			var gone int64
			err := database.RunInTx(ctx, s.db, func(ctx context.Context) error {
				var err error
				gone, err = step(database.Conn(ctx, s.db))
				return err
			})
			if err != nil {
				return err
			}
			if gone == 0 {
				break
			}
		}
	}
	return nil
}

// PrepareImportUnit makes ctx's unit of work plan each statement for the rows there
// are when it runs (risks.ImportUnits). PostgreSQL: a prepared statement's generic
// plan is made once, from the statistics of a table without the import's rows, and
// for an import's lookups of the next batch's external IDs it was a scan of every
// row written so far: a 100,000-row import took 166 s instead of 25. SET LOCAL ends
// with the transaction, so through PgBouncer's transaction pooling too. SQLite:
// nothing (its planner reads no such statistics per statement).
func (s *Store) PrepareImportUnit(ctx context.Context) error {
	if !s.postgres() {
		return nil
	}
	return database.Conn(ctx, s.db).Exec("SET LOCAL plan_cache_mode = force_custom_plan").Error
}
