package risks

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"
)

// Treatment is the decision taken about a risk (docs/register.md).
type Treatment string

// The treatments a risk can have; a risk without a decision has none (nil).
const (
	TreatmentAccept   Treatment = "accept"
	TreatmentMitigate Treatment = "mitigate"
	TreatmentTransfer Treatment = "transfer"
	TreatmentAvoid    Treatment = "avoid"
)

// Treatments lists every treatment, in the order the API documents them.
var Treatments = []Treatment{TreatmentAccept, TreatmentMitigate, TreatmentTransfer, TreatmentAvoid}

// Valid reports whether t is one of Treatments.
func (t Treatment) Valid() bool { return slices.Contains(Treatments, t) }

// Statuses lists every status, in the order the API documents them.
var Statuses = []Status{StatusOpen, StatusMitigated, StatusClosed}

// DateLayout is the form of a review date: a calendar date, no time or zone.
const DateLayout = "2006-01-02"

// Cadence is how often a risk is reviewed (reviewEvery): an ISO 8601 period
// (docs/register.md). A review sets reviewDate to its day plus the cadence.
type Cadence string

// The cadences a risk can have.
const (
	EveryMonth    Cadence = "P1M"
	EveryQuarter  Cadence = "P3M"
	EveryHalfYear Cadence = "P6M"
	EveryYear     Cadence = "P1Y"
)

// Cadences lists every cadence, in the order the API documents them.
var Cadences = []Cadence{EveryMonth, EveryQuarter, EveryHalfYear, EveryYear}

// Valid reports whether c is one of Cadences.
func (c Cadence) Valid() bool { return slices.Contains(Cadences, c) }

// After returns the date (DateLayout) c after day: the next review's date.
func (c Cadence) After(day time.Time) string {
	months := map[Cadence]int{EveryMonth: 1, EveryQuarter: 3, EveryHalfYear: 6, EveryYear: 12}[c]
	return day.AddDate(0, months, 0).Format(DateLayout)
}

// EarliestDate is the first day a date field takes: a year written with four
// digits can say 0001, which no register means (and PostgreSQL's date types treat
// years before 1 AD apart).
const EarliestDate = "1900-01-01"

// DateDetail says why s is no date a field takes ("" when it is one), in the words
// of a field error: the form, a day the calendar lacks (2026-02-30) or a day before
// EarliestDate each have their own, so the message names what to mend. nullable adds
// ", or null" to the form's message for a field that may be cleared.
func DateDetail(s string, nullable bool) string {
	form := "must be a date YYYY-MM-DD"
	if nullable {
		form += ", or null"
	}
	if len(s) != len(DateLayout) || s[4] != '-' || s[7] != '-' || !digits(s[:4]+s[5:7]+s[8:]) {
		return form
	}
	if d, err := time.Parse(DateLayout, s); err != nil || d.Format(DateLayout) != s {
		return fmt.Sprintf("%s is no day of the calendar", s)
	}
	if s < EarliestDate {
		return "must be " + EarliestDate + " or later"
	}
	return ""
}

func digits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Metadata limits, as Stripe's (docs/register.md).
const (
	MaxMetadataKeys     = 50
	MaxMetadataKeyLen   = 40
	MaxMetadataValueLen = 500
)

var metadataKey = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,40}$`)

// ValidMetadataKey reports whether k may name a metadata entry: 1–40 characters of
// [A-Za-z0-9_.-].
func ValidMetadataKey(k string) bool { return metadataKey.MatchString(k) }

// ValidateMetadata returns why m breaks the metadata rules, or "" when it keeps them.
func ValidateMetadata(m map[string]string) string {
	if len(m) > MaxMetadataKeys {
		return fmt.Sprintf("at most %d keys", MaxMetadataKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !ValidMetadataKey(k) {
			return fmt.Sprintf("key %q must be 1–%d characters of A-Z a-z 0-9 _ . -", k, MaxMetadataKeyLen)
		}
		if utf8.RuneCountInString(m[k]) > MaxMetadataValueLen {
			return fmt.Sprintf("value of %q must be at most %d characters", k, MaxMetadataValueLen)
		}
		if d := TextDetail(m[k], true); d != "" {
			return fmt.Sprintf("value of %q %s", k, d)
		}
	}
	return ""
}

// mergeMetadata returns base with change merged in key by key, a key set to ""
// removed; nil when nothing is left. Neither argument is modified.
func mergeMetadata(base, change map[string]string) map[string]string {
	out := maps.Clone(base)
	for k, v := range change {
		if v == "" {
			delete(out, k)
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
