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

// ValidDate reports whether s is a real calendar date written YYYY-MM-DD.
func ValidDate(s string) bool {
	d, err := time.Parse(DateLayout, s)
	return err == nil && d.Format(DateLayout) == s
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
