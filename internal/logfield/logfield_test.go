package logfield_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/logfield"
)

// TestDurationsInMilliseconds: through the JSON handler the logs use, a duration is
// a number of milliseconds under a key that says so.
func TestDurationsInMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("sweep",
		logfield.Duration(1234567*time.Microsecond), logfield.Millis("grace", 30*time.Second))
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if got := line["durationMs"]; got != 1234.567 {
		t.Errorf("durationMs = %v (%T), want 1234.567", got, got)
	}
	if got := line["graceMs"]; got != 30000.0 {
		t.Errorf("graceMs = %v (%T), want 30000", got, got)
	}
}
