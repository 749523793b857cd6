// Package trends is the register in time (docs/register.md, Trends): one snapshot
// of each tenant's counts per UTC day, refreshed by the schedule's every run so that
// today's is as of the last run and a past day keeps what its last run saw; the
// series of them (a day no run saw is a gap, never invented); and a risk's score
// history, read from its audit entries.
package trends

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/logfield"
)

// DateLayout is how days are written (YYYY-MM-DD, UTC).
const DateLayout = "2006-01-02"

// Bands are the score bands counted, each with the highest riskScore it holds:
// low 1–4, medium 5–9, high 10–16, critical 17–25.
var Bands = []struct {
	Name string
	Max  int
}{{"low", 4}, {"medium", 9}, {"high", 16}, {"critical", 25}}

// BandOf returns the band of a riskScore; "unscored" for nil.
func BandOf(score *int) string {
	if score == nil {
		return "unscored"
	}
	for _, b := range Bands {
		if *score <= b.Max {
			return b.Name
		}
	}
	return "critical"
}

// Counts is one tenant's register on one day: what a snapshot keeps and a trend
// point shows (docs/openapi.yaml, TrendPoint).
type Counts struct {
	Total int `json:"total"`
	// ByStatus counts risks by status, every status present.
	ByStatus map[string]int `json:"byStatus"`
	// ByTreatment counts risks by treatment; "none" for those without one.
	ByTreatment map[string]int `json:"byTreatment"`
	// ByBand counts risks by score band (BandOf), "unscored" included.
	ByBand          map[string]int `json:"byBand"`
	OutsideAppetite int            `json:"outsideAppetite"`
	// ReviewsOverdue: risks not closed whose reviewDate has passed.
	ReviewsOverdue int `json:"reviewsOverdue"`
	// ActionsOverdue: open actions whose dueDate has passed.
	ActionsOverdue int `json:"actionsOverdue"`
}

// Snapshot is one tenant's counts on Day, as of TakenAt (its last run that day).
type Snapshot struct {
	Day     string
	TakenAt time.Time
	Counts  Counts
}

// SnapshotStore is where snapshots are counted and kept.
type SnapshotStore interface {
	// Due returns up to limit tenants to snapshot on day: those with no snapshot of
	// day first, then those whose snapshot of day is stale (a change recorded since
	// its staleFrom), oldest first.
	Due(ctx context.Context, day string, limit int) ([]string, error)
	// Count counts the tenant's register as of today (YYYY-MM-DD).
	Count(ctx context.Context, tenantID, today string) (Counts, error)
	// Put stores the tenant's snapshot of day, replacing the one it had: one row
	// per (tenant, day), whichever instance writes it. A change recorded from
	// staleFrom on makes it stale.
	Put(ctx context.Context, tenantID, day string, c Counts, at, staleFrom time.Time) error
}

// Snapshotter takes each tenant's snapshot of today; the schedule runs it after the
// due-date notices (internal/app).
type Snapshotter struct {
	Store SnapshotStore // required
	// PerRun bounds the tenants one run snapshots (default 500): with more, the
	// stalest wait for the next run.
	PerRun int
	// Settle is how long after a change's audit entry was stamped its transaction
	// may still commit (the longest write: IMPORT_TIMEOUT, the store's bound), plus
	// the instances' clock skew. A run recounts a tenant only when its audit log has
	// an entry from Settle before the last count's start on: a change the count could
	// not see is from then on, and an idle tenant is not counted again that day.
	// Required.
	Settle time.Duration
	Now    func() time.Time // optional, default time.Now
	Logger *slog.Logger     // optional, default slog.Default()
}

// Run snapshots today's register of up to PerRun tenants and returns how many. A
// tenant's failure is logged and the others still run; the first error is returned.
func (s *Snapshotter) Run(ctx context.Context) (int, error) {
	start := time.Now()
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	per := s.PerRun
	if per <= 0 {
		per = 500
	}
	if s.Settle <= 0 {
		return 0, errors.New("trends: Snapshotter.Settle is required")
	}
	at := now().UTC()
	day := at.Format(DateLayout)
	tenants, err := s.Store.Due(ctx, day, per)
	if err != nil {
		log.ErrorContext(ctx, "register snapshots failed", slog.String("error", err.Error()))
		return 0, err
	}
	n := 0
	var first error
	for _, t := range tenants {
		c, err := s.Store.Count(ctx, t, day)
		if err == nil {
			err = s.Store.Put(ctx, t, day, c, at, at.Add(-s.Settle))
		}
		if err != nil {
			log.ErrorContext(ctx, "register snapshot failed", slog.String("tenant_id", t), slog.String("error", err.Error()))
			if first == nil {
				first = err
			}
			continue
		}
		n++
	}
	if n > 0 {
		log.DebugContext(ctx, "register snapshots taken", slog.Int("count", n), logfield.Duration(time.Since(start)))
	}
	return n, first
}
