package audit

import (
	"bytes"

	"github.com/riskapi/riskapi/internal/changes"
)

// Bookkeeping names the members that are never listed in an entry's changes: the
// target names the resource already, and the rest change with every write.
var Bookkeeping = []string{"id", "tenantId", "createdAt", "updatedAt", "version"}

// Diff returns c's changes: for each top-level member of the public form that
// differs between Before and After (a creation's Before and a deletion's After have
// none), its value before and after; for each of c.Secret, only that it changed.
// Bookkeeping members are left out; nil when nothing is left. Values come only from
// the public forms, which hold no secret or password (their stores see to that).
func Diff(c changes.Change) (map[string]Field, error) {
	from, err := changes.Previous(c.Before, c.After, Bookkeeping...)
	if err != nil {
		return nil, err
	}
	to, err := changes.Previous(c.After, c.Before, Bookkeeping...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Field, len(from)+len(c.Secret))
	for k, v := range from {
		// A member null before and after (absent from a creation's empty before) is
		// no change.
		if !bytes.Equal(v, to[k]) {
			out[k] = Field{From: v, To: to[k]}
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
