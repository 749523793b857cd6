package audit

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/riskapi/riskapi/internal/changes"
)

// Bookkeeping names the members that are never listed in an entry's changes: the
// target names the resource already, the entry says its own livemode, and the
// rest change with every write.
var Bookkeeping = []string{"id", "tenantId", "createdAt", "updatedAt", "version", "livemode"}

var null = json.RawMessage("null")

// Diff returns c's changes: for each top-level member of the public form that
// differs between Before and After (a creation's Before and a deletion's After have
// none, so a member missing from one side is null there), its value before and
// after; for each of c.Secret, only that it changed. Bookkeeping members are left
// out; nil when nothing is left. Values come only from the public forms, which hold
// no secret or password (their stores see to that). Each form is encoded once: Diff
// runs on every write.
func Diff(c changes.Change) (map[string]Field, error) {
	before, err := changes.Members(c.Before)
	if err != nil {
		return nil, err
	}
	after, err := changes.Members(c.After)
	if err != nil {
		return nil, err
	}
	out := map[string]Field{}
	add := func(k string, from, to json.RawMessage) {
		if from == nil {
			from = null
		}
		if to == nil {
			to = null
		}
		if !bytes.Equal(from, to) && !slices.Contains(Bookkeeping, k) {
			out[k] = Field{From: from, To: to}
		}
	}
	for k, to := range after {
		add(k, before[k], to)
	}
	for k, from := range before {
		if _, ok := after[k]; !ok {
			add(k, from, nil)
		}
	}
	for _, k := range c.Secret {
		out[k] = Field{Secret: true}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
