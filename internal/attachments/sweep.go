package attachments

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/logfield"
)

// OrphanSweeper removes attachment bytes that no row refers to: files moved into
// place by a request whose transaction then rolled back or died, files of deleted
// risks, and spool files a crashed process left in the temp folder. A file is only
// considered once it is older than Grace, which must exceed IDEMPOTENCY_LEASE: a
// request's transaction cannot outlive the lease, so by then its row has committed
// or never will. It is safe to run on several instances at once.
type OrphanSweeper struct {
	// Files is the layout to sweep. Required.
	Files Files
	// Store answers which attachments exist. Required.
	Store Store
	// Grace is the minimum age of a file before it may be removed
	// (config.Idempotency.Leases().OrphanGrace). Required.
	Grace time.Duration
	// BatchSize bounds each existence query. Optional. Default 500.
	BatchSize int
	// Now is the clock. Optional. Default time.Now.
	Now func() time.Time
	// Logger logs each removal and a summary. Optional. Default slog.Default().
	Logger *slog.Logger
}

// Sweep removes the orphans it finds and returns how many files it removed. Files it
// cannot make sense of (names that are not IDs) are left alone. It stops early when
// ctx is done, returning the count so far and ctx's error. Errors: a Grace that is
// not positive (nothing is removed).
func (s *OrphanSweeper) Sweep(ctx context.Context) (int, error) {
	grace, batch, now, log := s.Grace, s.BatchSize, time.Now, s.Logger
	if grace <= 0 {
		return 0, errors.New("attachments: OrphanSweeper.Grace must be positive")
	}
	if batch <= 0 {
		batch = 500
	}
	if s.Now != nil {
		now = s.Now
	}
	if log == nil {
		log = slog.Default()
	}
	cutoff := now().Add(-grace)
	start := time.Now()
	removed := 0
	remove := func(path, why string) {
		err := os.Remove(path)
		switch {
		case err == nil:
			removed++
			log.Info("attachment orphan removed", slog.String("path", path), slog.String("reason", why))
		case !errors.Is(err, fs.ErrNotExist): // another instance was faster
			log.Warn("attachment orphan could not be removed", slog.String("path", path), slog.String("error", err.Error()))
		}
	}

	// Spool files of requests that never ended (the process died): requests remove
	// their own when they end.
	for _, e := range oldFiles(s.Files.TempDir(), cutoff) {
		remove(filepath.Join(s.Files.TempDir(), e), "stale spool file")
	}

	tenants, err := os.ReadDir(s.Files.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return removed, nil
	}
	if err != nil {
		return removed, err
	}
	for _, t := range tenants {
		if !t.IsDir() || !scopeID(t.Name()) {
			continue
		}
		dir := filepath.Join(s.Files.Dir, t.Name())
		var candidates []string
		for _, name := range oldFiles(dir, cutoff) {
			if ids.Valid(ids.Attachment, name) {
				candidates = append(candidates, name)
			}
		}
		for len(candidates) > 0 {
			if err := ctx.Err(); err != nil {
				return removed, err
			}
			n := min(batch, len(candidates))
			exist, err := s.Store.Existing(ctx, t.Name(), candidates[:n])
			if err != nil {
				return removed, err
			}
			for _, id := range candidates[:n] {
				if !exist[id] {
					remove(filepath.Join(dir, id), "no attachment row")
				}
			}
			candidates = candidates[n:]
		}
	}
	log.Info("attachment orphan sweep", slog.Int("removed", removed), logfield.Duration(time.Since(start)))
	return removed, nil
}

// oldFiles lists the regular files in dir last modified before cutoff.
func oldFiles(dir string, cutoff time.Time) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
