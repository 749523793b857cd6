package requestlog

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// WriterConfig configures a Writer.
type WriterConfig struct {
	// Store receives the batches. Required.
	Store Store
	// BufferSize is how many entries may wait for their insert; beyond it entries
	// are dropped and counted, those of the tenant with the most waiting first.
	// Optional. Default 10000.
	BufferSize int
	// BatchSize bounds one insert. Optional. Default 500.
	BatchSize int
	// FlushInterval is the longest an entry waits for a batch to fill: about the
	// window in which a crash loses entries (docs/requests.md). Optional. Default
	// 500ms.
	FlushInterval time.Duration
	// InsertTimeout bounds one insert. Optional. Default 10s.
	InsertTimeout time.Duration
	// Metrics, Logger: optional.
	Metrics *Metrics
	Logger  *slog.Logger
}

// Writer takes entries from requests without ever blocking them and inserts them
// in batches from one background goroutine. When the store is slower than the
// traffic the buffer fills and further entries are dropped (and counted) rather
// than slowing requests down: the log describes requests, it must not throttle them.
type Writer struct {
	cfg     WriterConfig
	q       *queue
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{}
	closed  atomic.Bool
	once    sync.Once
}

// NewWriter starts a Writer. Errors: a missing Store.
func NewWriter(cfg WriterConfig) (*Writer, error) {
	if cfg.Store == nil {
		return nil, errors.New("requestlog: Store is required")
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = 10000
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 500 * time.Millisecond
	}
	if cfg.InsertTimeout <= 0 {
		cfg.InsertTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Writer{cfg: cfg, q: newQueue(cfg.BufferSize, cfg.BatchSize), flushes: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w, nil
}

// Write queues e and returns at once; it reports false when e was dropped (buffer
// full and e's tenant the one with the most waiting, or the Writer closed). When
// the buffer is full and another tenant has more waiting, one of that tenant's
// entries is dropped instead.
func (w *Writer) Write(e *Entry) bool {
	if w.closed.Load() {
		w.cfg.Metrics.drop(DropClosed, 1)
		return false
	}
	kept, dropped := w.q.push(e)
	if dropped {
		w.cfg.Metrics.drop(DropBufferFull, 1)
	}
	return kept
}

// Flush inserts every entry queued before the call and returns when they are
// stored (or dropped), or when ctx ends.
func (w *Writer) Flush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case w.flushes <- ack:
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops taking entries, inserts those queued and returns when done or when
// ctx ends. Call it after the HTTP server has shut down, so that no request still
// writes; an entry written after Close is dropped and counted.
func (w *Writer) Close(ctx context.Context) error {
	w.once.Do(func() {
		w.closed.Store(true)
		close(w.stop)
	})
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the one inserter: a batch goes out when one is full, when the oldest
// waiting entry has waited FlushInterval, on Flush and on Close.
func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(w.cfg.FlushInterval)
	timer.Stop()
	timing := false
	for {
		select {
		case <-w.q.ready:
			for w.q.len() >= w.cfg.BatchSize {
				w.insert(w.q.take(w.cfg.BatchSize))
			}
			if n := w.q.len(); n > 0 && !timing {
				timer.Reset(w.cfg.FlushInterval)
				timing = true
			} else if n == 0 && timing {
				timer.Stop()
				timing = false
			}
		case <-timer.C:
			// Only what waited: draining until empty would chase the entries that
			// arrive during each insert, one small insert after another (at 3000
			// requests/s, ~30 rows per COPY instead of a batch per interval).
			w.drainWaiting()
			// What arrived meanwhile may have sent no signal (only an empty queue's
			// first entry and a full batch do): its interval starts now.
			if w.q.len() > 0 {
				timer.Reset(w.cfg.FlushInterval)
				timing = true
			} else {
				timing = false
			}
		case ack := <-w.flushes:
			w.drain()
			close(ack)
		case <-w.stop:
			w.drain()
			return
		}
	}
}

// drain inserts every waiting entry, in batches, until none waits (Flush, Close).
func (w *Writer) drain() {
	for w.q.len() > 0 {
		w.insert(w.q.take(w.cfg.BatchSize))
	}
}

// drainWaiting inserts, in batches, as many entries as waited when it was called;
// those written meanwhile wait for the next batch or interval.
func (w *Writer) drainWaiting() {
	for n := w.q.len(); n > 0; {
		batch := w.q.take(min(n, w.cfg.BatchSize))
		if len(batch) == 0 {
			return
		}
		n -= len(batch)
		w.insert(batch)
	}
}

// insert stores batch. A failed insert drops the batch: retrying would hold up
// every later entry behind a store that is failing.
func (w *Writer) insert(batch []*Entry) {
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.InsertTimeout)
	start := time.Now()
	err := w.cfg.Store.Insert(ctx, batch)
	cancel()
	w.cfg.Metrics.batch(len(batch), time.Since(start), err)
	if err != nil {
		w.cfg.Metrics.drop(DropInsertFailed, len(batch))
		w.cfg.Logger.Warn("request log: batch insert failed, entries dropped",
			slog.Int("entries", len(batch)), slog.String("error", err.Error()))
	}
}
