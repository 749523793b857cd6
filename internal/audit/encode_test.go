package audit_test

import (
	"encoding/json"
	"testing"

	"github.com/riskapi/riskapi/internal/audit"
	"github.com/riskapi/riskapi/internal/changes"
)

// TestEncodeChangesIsWhatJSONMarshalWrites: an entry's changes are stored as the
// same bytes json.Marshal would write — for a creation's diff, an update's, a
// secret, values with HTML characters, line separators and escapes, keys that
// need escaping — and a value that is no JSON is refused.
func TestEncodeChangesIsWhatJSONMarshalWrites(t *testing.T) {
	t.Parallel()
	owner := `<script>&"x"</script>`
	before := view{ID: "r1", Title: "old \u2028 title", UpdatedAt: "t1"}
	after := view{ID: "r1", Title: "new, {title} [with] \"quotes\" \\ é", Owner: &owner, UpdatedAt: "t2"}
	var diffs []map[string]audit.Field
	for _, c := range []changes.Change{
		{Action: changes.RiskCreated, After: after},
		{Action: changes.RiskUpdated, Before: before, After: after, Secret: []string{"secret"}},
		{Action: changes.RiskDeleted, Before: before},
	} {
		d, err := audit.Diff(c)
		if err != nil {
			t.Fatal(err)
		}
		diffs = append(diffs, d)
	}
	diffs = append(diffs,
		map[string]audit.Field{},
		map[string]audit.Field{"a<b>&\"c\"\u00e9": {From: json.RawMessage(`1`), To: nil}, "z": {Secret: true},
			"nested": {From: json.RawMessage(`{"a":[1,"<>&\u2029"],"b":null}`), To: json.RawMessage(`"x"`)}},
		nil,
	)
	for i, d := range diffs {
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := audit.EncodeChanges(d)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if _, err := audit.EncodeChanges(map[string]audit.Field{"a": {From: json.RawMessage(`{no`)}}); err == nil {
		t.Error("a value that is no JSON was encoded")
	}
}
