package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// EncodeChanges returns changes' JSON form: what json.Marshal writes for it (members
// in key order, each Field as its MarshalJSON writes it), for values that are
// compact JSON as Diff's are. It is written by hand because every write's entry is
// encoded, and json.Marshal's reflection and its compacting of each value twice
// showed in the write's CPU profile (docs/performance.md, issue 44). Errors: a value
// that is no valid JSON.
func EncodeChanges(changes map[string]Field) ([]byte, error) {
	if changes == nil {
		return []byte("null"), nil
	}
	keys := make([]string, 0, len(changes))
	size := 2
	for k, f := range changes {
		keys = append(keys, k)
		size += len(k) + len(f.From) + len(f.To) + 20
	}
	slices.Sort(keys)
	out := bytes.NewBuffer(make([]byte, 0, size))
	out.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := writeKey(out, k); err != nil {
			return nil, err
		}
		f := changes[k]
		if f.Secret {
			out.Write(secretChanged)
			continue
		}
		out.WriteString(`{"from":`)
		if err := writeValue(out, f.From); err != nil {
			return nil, err
		}
		out.WriteString(`,"to":`)
		if err := writeValue(out, f.To); err != nil {
			return nil, err
		}
		out.WriteByte('}')
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// writeKey writes k as a member's key and its colon: as it is when it holds only
// printable ASCII that JSON (and json.Marshal's HTML escaping) leaves alone, else
// as json.Marshal escapes it.
func writeKey(out *bytes.Buffer, k string) error {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(k)
			if err != nil {
				return err
			}
			out.Write(b)
			out.WriteByte(':')
			return nil
		}
	}
	out.WriteByte('"')
	out.WriteString(k)
	out.WriteString(`":`)
	return nil
}

var errInvalidValue = errors.New("audit: a change's value is no valid JSON")

// writeValue writes v, null when v is nil, with json.Marshal's HTML escaping.
func writeValue(out *bytes.Buffer, v json.RawMessage) error {
	if v == nil {
		out.WriteString("null")
		return nil
	}
	if !json.Valid(v) {
		return errInvalidValue
	}
	json.HTMLEscape(out, v)
	return nil
}
