package ids_test

import (
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/ids"
)

// TestBeforeSelectsByTheIDsTime: an ID minted for a time sorts below Before of any
// later millisecond and not below Before of its own or an earlier one — what the
// audit log's sweep relies on to delete by ID.
func TestBeforeSelectsByTheIDsTime(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 123_456_000, time.UTC)
	id := ids.NewAt(ids.Audit, at)
	if !ids.Valid(ids.Audit, id) {
		t.Fatalf("NewAt minted %q", id)
	}
	for _, c := range []struct {
		t    time.Time
		want bool
	}{{at.Add(time.Millisecond), true}, {at.Add(time.Hour), true}, {at, false},
		{at.Truncate(time.Millisecond), false}, {at.Add(-time.Millisecond), false}} {
		if got := id < ids.Before(ids.Audit, c.t); got != c.want {
			t.Errorf("%s < Before(%s) = %v, want %v", id, c.t.Format(time.RFC3339Nano), got, c.want)
		}
	}
	now := ids.New(ids.Audit)
	if !(id < now) || ids.NewAt(ids.Audit, time.Now().Add(time.Hour)) < now {
		t.Errorf("NewAt's IDs do not sort by their time among New's: %s, %s", id, now)
	}
}
