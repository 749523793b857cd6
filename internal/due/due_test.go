package due

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/changes"
)

// oneItem finds one item until it is noticed; its claims always succeed.
type oneItem struct{ it Item }

func (s oneItem) InTx(ctx context.Context, fn func(ctx context.Context) error) error { return fn(ctx) }
func (s oneItem) Find(context.Context, changes.Action, Source, string, string, int, int) ([]Item, error) {
	return []Item{s.it}, nil
}
func (s oneItem) Claim(context.Context, string, changes.Action, Item, time.Time) (bool, error) {
	return true, nil
}

// TestAFailedNoticeIsLoggedWithItsItem: an operator whose schedule logs "due-date
// notices failed" every minute learns which row fails — its tenant, object and due
// date — and the error, and no other kind is held up by it.
func TestAFailedNoticeIsLoggedWithItsItem(t *testing.T) {
	var logs bytes.Buffer
	broken := errors.New("stored value cannot be read")
	noticed := 0
	f := &Finder{
		Store:  oneItem{Item{TenantID: "ten_1", ObjectID: "acc_9", DueDate: "2026-11-30"}},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Kinds: []Kind{
			{Action: "acceptance.expired", Lead: -1, Notice: func(context.Context, Item, string) error { return broken }},
			{Action: "action.overdue", Lead: -1, Notice: func(context.Context, Item, string) error { noticed++; return nil }},
		},
		Batches: 1,
	}
	n, err := f.Run(context.Background())
	if !errors.Is(err, broken) || n != 1 || noticed != 1 {
		t.Fatalf("Run = %d, %v (other kind noticed %d); want the failure returned and the other kind's notice", n, err, noticed)
	}
	line := logs.String()
	for _, want := range []string{`"msg":"due-date notices failed"`, `"kind":"acceptance.expired"`, `"tenant_id":"ten_1"`,
		`"object_id":"acc_9"`, `"due_date":"2026-11-30"`, `"error":"stored value cannot be read"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %s:\n%s", want, line)
		}
	}
}
