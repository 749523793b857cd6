package sweep

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riskapi/riskapi/internal/logfield"
)

// Batched is a sweep that is not by age: it runs Batch through Batches until a
// batch comes back short. The heat map's counts are folded by one (internal/app).
type Batched struct {
	// Name names the sweep in its log line ("heat count fold"). Required.
	Name string
	// Batch handles up to limit rows and returns how many it handled. Required.
	Batch func(ctx context.Context, limit int) (int, error)
	// Pacing bounds each batch and the breather between them. Optional. Default:
	// batches of DefaultBatchSize, no pause.
	Pacing Pacing
	// Logger logs each sweep that handled something. Optional.
	Logger *slog.Logger
}

// Sweep runs the batches and returns how many rows they handled. It stops early
// when ctx is done (Batches). Errors: a nil Batch; Batch's.
func (s Batched) Sweep(ctx context.Context) (int, error) {
	if s.Batch == nil {
		return 0, errors.New(s.Name + ": no Batch")
	}
	start := time.Now()
	total, err := Batches(ctx, s.Pacing, s.Batch)
	if s.Logger != nil && total > 0 {
		s.Logger.Info(s.Name, slog.Int("rows", total), logfield.Duration(time.Since(start)))
	}
	return total, err
}
