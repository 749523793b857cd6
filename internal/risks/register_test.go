package risks

import "testing"

// TestDateDetailNamesTheFault: a date field's error says what is wrong with the
// value sent — its form, a day the calendar lacks, a year before 1900 — rather
// than repeating the form to a client who wrote the form right.
func TestDateDetailNamesTheFault(t *testing.T) {
	for _, tt := range []struct {
		in       string
		nullable bool
		want     string
	}{
		{"2026-03-01", false, ""},
		{"1900-01-01", true, ""},
		{"9999-12-31", false, ""},
		{"2026-3-1", false, "must be a date YYYY-MM-DD"},
		{"2026-03-01T00:00:00Z", true, "must be a date YYYY-MM-DD, or null"},
		{"+026-03-01", false, "must be a date YYYY-MM-DD"},
		{"2026-02-30", true, "2026-02-30 is no day of the calendar"},
		{"2026-13-01", false, "2026-13-01 is no day of the calendar"},
		{"0000-01-01", false, "must be 1900-01-01 or later"},
		{"1899-12-31", true, "must be 1900-01-01 or later"},
	} {
		if got := DateDetail(tt.in, tt.nullable); got != tt.want {
			t.Errorf("DateDetail(%q, %v) = %q, want %q", tt.in, tt.nullable, got, tt.want)
		}
	}
}
