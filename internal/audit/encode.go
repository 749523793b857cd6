package audit

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// EncodeChanges returns changes' JSON form: what json.Marshal writes for it (members
// in key order, each Field as its MarshalJSON writes it, with json.Marshal's HTML and
// line-separator escaping). It is written with jsontext's streaming encoder because
// every write's entry is encoded, and json.Marshal's reflection and its compacting of
// each value twice showed in the write's CPU profile (docs/performance.md, issue 44).
// Errors: a value that is no valid JSON.
func EncodeChanges(changes map[string]Field) ([]byte, error) {
	if changes == nil {
		return []byte("null"), nil
	}
	out := bytes.NewBuffer(make([]byte, 0, 64*len(changes)))
	e := jsontext.NewEncoder(out, jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true), jsontext.AllowInvalidUTF8(true))
	err := e.WriteToken(jsontext.BeginObject)
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		if err != nil {
			break
		}
		err = e.WriteToken(jsontext.String(k))
		if f := changes[k]; f.Secret {
			err = firstErr(err, e.WriteValue(secretChanged))
		} else {
			err = firstErr(err, e.WriteToken(jsontext.BeginObject),
				e.WriteToken(jsontext.String("from")), e.WriteValue(orNull(f.From)),
				e.WriteToken(jsontext.String("to")), e.WriteValue(orNull(f.To)),
				e.WriteToken(jsontext.EndObject))
		}
	}
	if err = firstErr(err, e.WriteToken(jsontext.EndObject)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// orNull is v as a JSON value: null when v is nil.
func orNull(v json.RawMessage) jsontext.Value {
	if v == nil {
		return jsontext.Value("null")
	}
	return jsontext.Value(v)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
