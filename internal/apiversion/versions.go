package apiversion

import (
	"bytes"
	"encoding/json"
)

// The versions of the API, oldest first (docs/api-versions.md).
const (
	// V20261201 is the shape of the contract's sections 3–16.
	V20261201 Version = "2026-12-01"
)

// changes are the version changes, oldest first: one Change per dated change, in a
// file of its own named for its version and what it changes (e.g.
// v20270115_owner.go), appended here.
var changes = []Change{ownerObject, snapshotOwner}

// API is riskapi's versions and their changes.
var API = must(New([]Version{V20261201, V20270115}, changes))

func must(s *Set, err error) *Set {
	if err != nil {
		panic(err)
	}
	return s
}

// DecodeObject decodes a JSON object for a transform, numbers kept as written
// (json.Number), so that a transform that does not touch them changes no digit.
func DecodeObject(b []byte) (Object, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var obj Object
	if err := d.Decode(&obj); err != nil {
		return nil, err
	}
	return obj, nil
}
