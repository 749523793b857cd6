// Package jsonbody decodes JSON request bodies strictly and explains failures as
// VALIDATION_FAILED problems that name the offending field: unknown members,
// duplicate names, wrong types, invalid UTF-8 and lone surrogates are all refused.
package jsonbody

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/riskapi/riskapi/internal/problem"
)

// Decode reads one JSON value from r into v (a pointer to a struct with json tags).
// Errors: *problem.Problem VALIDATION_FAILED whose field is the JSON member at fault
// ("body" when the fault is not in one member), or PAYLOAD_TOO_LARGE when r is an
// http.MaxBytesReader that hit its limit.
func Decode(r io.Reader, v any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		// A body cut off by http.MaxBytesReader (no or a false Content-Length) is the
		// client's fault, not an internal error.
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return problem.New(problem.PayloadTooLarge, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		return err
	}
	switch strings.TrimSpace(string(data)) {
	case "":
		return problem.Invalid("body", "a JSON object is required")
	case "null":
		// Decoding null into a struct would silently succeed as "nothing given".
		return problem.Invalid("body", "must be a JSON object")
	}
	err = json.Unmarshal(data, v, json.RejectUnknownMembers(true))
	if err != nil {
		return explain(err)
	}
	if field, ok := nulField(data); ok {
		return problem.Invalid(field, "must not contain the NUL character (\\u0000)")
	}
	return nil
}

// nulField names the first member whose name or string value holds U+0000. JSON
// allows it, but PostgreSQL text cannot store it, and the same input must get the
// same answer on every store.
func nulField(data []byte) (string, bool) {
	if !strings.Contains(string(data), `\u0000`) {
		return "", false // NUL can only be written escaped inside a JSON string
	}
	dec := jsontext.NewDecoder(strings.NewReader(string(data)))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		if tok.Kind() == '"' && strings.ContainsRune(tok.String(), 0) {
			return pointerField(dec.StackPointer()), true
		}
	}
}

func explain(err error) *problem.Problem {
	var sem *json.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &sem):
		field := pointerField(sem.JSONPointer)
		switch {
		case errors.Is(err, json.ErrUnknownName):
			return problem.Invalid(field, "is not a known field")
		case errors.Is(err, errNotInteger):
			return problem.Invalid(field, "must be an integer")
		case field == "body":
			return problem.Invalid("body", "must be a JSON object")
		case sem.JSONKind != 0:
			return problem.Invalid(field, "has the wrong type ("+kindName(sem.JSONKind)+" given)")
		default:
			return problem.Invalid(field, "is invalid")
		}
	case errors.As(err, &syn):
		field := pointerField(syn.JSONPointer)
		switch {
		case errors.Is(err, jsontext.ErrDuplicateName):
			return problem.Invalid(field, "appears more than once")
		case field != "body" && !errors.Is(err, io.ErrUnexpectedEOF):
			// Invalid UTF-8, a lone surrogate, a bad escape or literal inside one member.
			return problem.Invalid(field, "is not valid JSON: "+strings.TrimPrefix(syn.Err.Error(), "jsontext: "))
		default:
			return problem.Invalid("body", "is not valid JSON: "+strings.TrimPrefix(syn.Err.Error(), "jsontext: "))
		}
	}
	return problem.Invalid("body", "is not valid JSON")
}

// pointerField turns "/owner" into "owner" and "" into "body".
func pointerField(p jsontext.Pointer) string {
	s := strings.TrimPrefix(string(p), "/")
	if s == "" {
		return "body"
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// DecodeRequest is Decode for an HTTP request whose body must be JSON: its
// Content-Type must be absent, application/json or a +json type (parameters such as
// charset are ignored), so that the handler reads the body the way the idempotency
// fingerprint counts it. Errors: as Decode, and VALIDATION_FAILED naming
// "Content-Type".
func DecodeRequest(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return problem.Invalid("Content-Type", "must be application/json")
		}
	}
	return Decode(r.Body, v)
}
