package riskstore_test

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/database"
)

// changeLog is a changes.Recorder that keeps what it is given, refuses to record
// outside a transaction (as the outbox does), and fails with fail when it is set.
type changeLog struct {
	mu   sync.Mutex
	got  []changes.Change
	fail error
}

func (l *changeLog) Record(ctx context.Context, c changes.Change) error {
	if !database.InTx(ctx) {
		return errors.New("recorded outside the change's transaction")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	l.got = append(l.got, c)
	return nil
}

func (l *changeLog) all() []changes.Change {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}
