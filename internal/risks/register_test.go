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

// TestTextDetailRefusesWhatHidesText: a title with a control character or a
// bidirectional override is refused, naming the character; a description keeps
// its line breaks; right-to-left text with its marks is kept.
func TestTextDetailRefusesWhatHidesText(t *testing.T) {
	for _, tt := range []struct {
		in        string
		multiline bool
		want      string
	}{
		{"Vendor outage", false, ""},
		{"ספק \u200fנפל", false, ""},
		{"line one\nline two\twith a tab", true, ""},
		{"line one\nline two", false, "must not contain the control character U+000A"},
		{"bell\a", true, "must not contain the control character U+0007"},
		{"c1\u0085", false, "must not contain the control character U+0085"},
		{"invoice \u202Egnp.exe", false, "must not contain the bidirectional formatting character U+202E"},
		{"isolate \u2066x\u2069", true, "must not contain the bidirectional formatting character U+2066"},
	} {
		if got := TextDetail(tt.in, tt.multiline); got != tt.want {
			t.Errorf("TextDetail(%q, %v) = %q, want %q", tt.in, tt.multiline, got, tt.want)
		}
	}
}
