package changes

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Previous returns, for each top-level JSON member whose value differs between
// before and after, its value in before (a member absent from before is null there),
// leaving out the members named in ignore. Both must marshal to JSON objects. It is
// how a risk.updated event's previousAttributes are found (docs/events.md).
func Previous(before, after any, ignore ...string) (map[string]json.RawMessage, error) {
	b, err := members(before)
	if err != nil {
		return nil, err
	}
	a, err := members(after)
	if err != nil {
		return nil, err
	}
	skip := make(map[string]bool, len(ignore))
	for _, k := range ignore {
		skip[k] = true
	}
	out := map[string]json.RawMessage{}
	for k, av := range a {
		if bv, ok := b[k]; !skip[k] && (!ok || !bytes.Equal(av, bv)) {
			if !ok {
				bv = json.RawMessage("null")
			}
			out[k] = bv
		}
	}
	for k, bv := range b {
		if _, ok := a[k]; !ok && !skip[k] {
			out[k] = bv
		}
	}
	return out, nil
}

func members(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("changes: encode: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("changes: not a JSON object: %w", err)
	}
	return m, nil
}
