// Package jsonbody is the one home of JSON request bodies: which requests carry JSON
// (IsJSON), how a number is read (Number), the canonical form the idempotency
// fingerprint hashes (Canonical), and strict decoding for handlers (DecodeRequest,
// Unmarshal). Failures are VALIDATION_FAILED problems that name the offending field:
// unknown members, duplicate names, wrong types, invalid UTF-8 and lone surrogates
// are all refused, by the canonicaliser and the decoder alike.
//
// The body itself is read once, by reqbody: a keyed request's fingerprint and its
// handler share one buffer.
package jsonbody

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/reqbody"
)

// Unmarshal decodes the JSON text data into v (a pointer to a struct with json tags).
// Errors: *problem.Problem VALIDATION_FAILED whose field is the JSON member at fault
// ("body" when the fault is not in one member).
func Unmarshal(data []byte, v any) error {
	switch strings.TrimSpace(string(data)) {
	case "":
		return problem.Invalid("body", "a JSON object is required")
	case "null":
		// Decoding null into a struct would silently succeed as "nothing given".
		return problem.Invalid("body", "must be a JSON object")
	}
	if err := json.Unmarshal(data, v, json.RejectUnknownMembers(true)); err != nil {
		if every := memberErrors(data, v); every != nil {
			return every
		}
		return explain(err)
	}
	if field, ok := nulField(data); ok {
		return problem.Invalid(field, "must not contain the NUL character (\\u0000)")
	}
	return nil
}

// memberErrors names the fault of every member of a top-level object that does not
// decode into v's type (an unknown member, a wrong type), in the body's order: the
// decoder stops at the first, and docs/errors.md promises one error per offending
// field. Each member is decoded on its own into a fresh value, so this runs only
// when the whole body was refused. It returns nil when data is not an object whose
// members can be read one by one (a syntax error, a duplicate name): then the
// decoder's own first error stands.
func memberErrors(data []byte, v any) *problem.Problem {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	var fields []problem.FieldError
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		name := jsontext.String(tok.String()) // tok is voided by the next read
		value, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		var one bytes.Buffer
		enc := jsontext.NewEncoder(&one)
		if enc.WriteToken(jsontext.BeginObject) != nil || enc.WriteToken(name) != nil ||
			enc.WriteValue(value) != nil || enc.WriteToken(jsontext.EndObject) != nil {
			return nil
		}
		err = json.Unmarshal(one.Bytes(), reflect.New(t.Elem()).Interface(), json.RejectUnknownMembers(true))
		if err != nil {
			fields = append(fields, explain(err).Errors...)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil // more than one document: the decoder's error says so
	}
	return problem.Fields(fields)
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
			return problem.Invalid(field, "has the wrong type ("+kindName(sem.JSONKind)+" given"+expected(sem.GoType)+")")
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
	return shortField(strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~"))
}

// maxField bounds a field name in a problem, in bytes: a body nested thousands
// deep (or with a huge member name) would otherwise be answered with its whole
// path, twice (field and detail), tens of kilobytes of the client's own input.
const maxField = 120

// shortField is field cut to at most maxField bytes, at a "/" where there is one
// and on a character boundary, ending in "…" when it was cut.
func shortField(field string) string {
	if len(field) <= maxField {
		return field
	}
	cut := maxField
	for cut > 0 && !utf8.RuneStart(field[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(field[:cut], '/'); i > 0 {
		cut = i + 1
	}
	return field[:cut] + "…"
}

// expected says which JSON a member of Go type t takes, as ", an object expected"
// ("" when t says nothing a client can use), so the error names what to send: an
// owner written as a string, as the 2026-12-01 version took it, reads "string
// given, an object expected".
func expected(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return ", an object expected"
	case reflect.Slice, reflect.Array:
		return ", an array expected"
	case reflect.String:
		return ", a string expected"
	case reflect.Bool:
		return ", a boolean expected"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return ", a number expected"
	}
	return ""
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

// IsJSON reports whether req's body is JSON by its media type: Content-Type absent,
// application/json, or any +json type (RFC 6839), parameters such as charset
// ignored. It is the one rule: the fingerprint canonicalises exactly the bodies the
// handlers decode.
func IsJSON(req *http.Request) bool {
	mt, ok := reqbody.MediaType(req)
	return ok && (mt == "" || mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// DecodeRequest decodes req's JSON body into v, reading it through reqbody (once:
// a keyed request's body was already read for its fingerprint). Errors: *problem.Problem
// VALIDATION_FAILED naming "Content-Type" when !IsJSON(req), as reqbody.Read (413, or
// 400 for a body that ended early), or as Unmarshal.
func DecodeRequest(req *http.Request, v any) error {
	if !IsJSON(req) {
		return problem.Invalid("Content-Type", "must be application/json")
	}
	data, err := reqbody.Read(req, 0)
	if err != nil {
		return err
	}
	return Unmarshal(data, v)
}
