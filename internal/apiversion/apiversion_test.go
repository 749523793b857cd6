package apiversion_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apiversion"
)

// Two fake changes after 2026-12-01, the second reading what the first wrote, so that
// their order shows: 2027-01-15 makes a risk's owner an object, 2027-03-01 renames
// it ownedBy.
var (
	ownerObject = apiversion.Change{Version: "2027-01-15", Description: "owner is an object", Resources: []string{"risk"},
		Request: func(o apiversion.Object) error {
			name, ok := o["owner"].(string)
			if !ok {
				return fmt.Errorf("owner is %T", o["owner"])
			}
			o["owner"] = map[string]any{"userId": nil, "name": name}
			return nil
		},
		Response: func(o apiversion.Object) error {
			owner, ok := o["owner"].(map[string]any)
			if !ok {
				return fmt.Errorf("owner is %T", o["owner"])
			}
			o["owner"] = owner["name"]
			return nil
		}}
	ownedBy = apiversion.Change{Version: "2027-03-01", Description: "owner is ownedBy", Resources: []string{"risk"},
		Request:  func(o apiversion.Object) error { o["ownedBy"] = o["owner"]; delete(o, "owner"); return nil },
		Response: func(o apiversion.Object) error { o["owner"] = o["ownedBy"]; delete(o, "ownedBy"); return nil },
		Event: func(o apiversion.Object) error {
			o["owner"] = o["ownedBy"]
			delete(o, "ownedBy")
			o["rendered"] = "event"
			return nil
		}}
	versions = []apiversion.Version{"2026-12-01", "2027-01-15", "2027-03-01"}
)

func fakeSet(t *testing.T) *apiversion.Set {
	t.Helper()
	s, err := apiversion.New(versions, []apiversion.Change{ownerObject, ownedBy})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func object(t *testing.T, s string) apiversion.Object {
	t.Helper()
	o, err := apiversion.DecodeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func same(t *testing.T, want string, got apiversion.Object) {
	t.Helper()
	if diff := cmp.Diff(object(t, want), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestResponsesGoBackNewestFirst: a newest-shape risk answered in an older version
// passes every change after that version, newest first; numbers keep their digits.
func TestResponsesGoBackNewestFirst(t *testing.T) {
	s := fakeSet(t)
	newest := `{"id":"risk_1","ownedBy":{"userId":null,"name":"ann"},"riskScore":12.50}`
	for _, tt := range []struct {
		v    apiversion.Version
		want string
	}{
		{"2027-03-01", newest},
		{"2027-01-15", `{"id":"risk_1","owner":{"userId":null,"name":"ann"},"riskScore":12.50}`},
		{"2026-12-01", `{"id":"risk_1","owner":"ann","riskScore":12.50}`},
	} {
		t.Run(string(tt.v), func(t *testing.T) {
			o := object(t, newest)
			if err := s.Response(tt.v, "risk", o); err != nil {
				t.Fatal(err)
			}
			same(t, tt.want, o)
		})
	}
}

// TestRequestsGoForwardOldestFirst: a body written in 2026-12-01 reaches the
// handler in the newest shape.
func TestRequestsGoForwardOldestFirst(t *testing.T) {
	s := fakeSet(t)
	o := object(t, `{"title":"DPA","owner":"ann"}`)
	if err := s.Request("2026-12-01", "risk", o); err != nil {
		t.Fatal(err)
	}
	same(t, `{"title":"DPA","ownedBy":{"userId":null,"name":"ann"}}`, o)
}

// TestEventsTakeTheirOwnTransform: an event's object goes back through a change's
// Event transform when it has one, else through its Response.
func TestEventsTakeTheirOwnTransform(t *testing.T) {
	s := fakeSet(t)
	o := object(t, `{"id":"risk_1","ownedBy":{"userId":null,"name":"ann"}}`)
	if err := s.Event("2026-12-01", "risk", o); err != nil {
		t.Fatal(err)
	}
	same(t, `{"id":"risk_1","owner":"ann","rendered":"event"}`, o)
}

// TestOtherResourcesPassUntouched: a change touches only its resource types.
func TestOtherResourcesPassUntouched(t *testing.T) {
	s := fakeSet(t)
	const att = `{"id":"att_1","owner":"ann"}`
	o := object(t, att)
	if err := s.Response("2026-12-01", "attachment", o); err != nil {
		t.Fatal(err)
	}
	same(t, att, o)
}

// TestUnknownVersion: a version not listed is ErrUnknown, for every direction.
func TestUnknownVersion(t *testing.T) {
	s := fakeSet(t)
	if _, err := s.Parse("2026-11-30"); !errors.Is(err, apiversion.ErrUnknown) {
		t.Errorf("Parse: %v", err)
	}
	for name, f := range map[string]func(apiversion.Version, string, apiversion.Object) error{
		"request": s.Request, "response": s.Response, "event": s.Event} {
		if err := f("2027-02-01", "risk", apiversion.Object{}); !errors.Is(err, apiversion.ErrUnknown) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if v, err := s.Parse("2027-01-15"); err != nil || v != "2027-01-15" || s.Newest() != "2027-03-01" {
		t.Errorf("Parse = %q, %v; Newest = %q", v, err, s.Newest())
	}
}

// TestNewRefusesABadList: versions out of order or not dates, a change at no
// version, at the first one, out of order, of no resource or with two ways to
// render an answer are refused at start.
func TestNewRefusesABadList(t *testing.T) {
	for name, tt := range map[string]struct {
		versions []apiversion.Version
		changes  []apiversion.Change
	}{
		"no version":           {nil, nil},
		"not a date":           {[]apiversion.Version{"2026-12"}, nil},
		"out of order":         {[]apiversion.Version{"2027-01-15", "2026-12-01"}, nil},
		"change at no version": {versions[:2], []apiversion.Change{ownedBy}},
		"change at the first":  {versions, []apiversion.Change{{Version: "2026-12-01", Resources: []string{"risk"}}}},
		"changes out of order": {versions, []apiversion.Change{ownedBy, ownerObject}},
		"no resource":          {versions, []apiversion.Change{{Version: "2027-01-15"}}},
		"members and response": {versions, []apiversion.Change{{Version: "2027-01-15", Resources: []string{"risk"},
			Members: map[string]apiversion.MemberRender{"owner": nil}, Response: ownerObject.Response}}},
	} {
		if _, err := apiversion.New(tt.versions, tt.changes); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestTheAPIsVersions: riskapi's own list holds, its newest is 2027-01-15, and the
// owner change reads and renders 2026-12-01's string both ways: a user owner reads
// as its name (the user's email), a string written is a name owner, a
// previousAttributes without owner is left alone, a non-string owner is refused.
func TestTheAPIsVersions(t *testing.T) {
	if got := apiversion.API.Newest(); got != apiversion.V20270115 {
		t.Errorf("newest = %s", got)
	}
	o := object(t, `{"owner":{"userId":"usr_1","name":"ann@example.com"},"title":"t"}`)
	if err := apiversion.API.Response(apiversion.V20261201, "risk", o); err != nil {
		t.Fatal(err)
	}
	same(t, `{"owner":"ann@example.com","title":"t"}`, o)
	o = object(t, `{"owner":{"userId":null,"name":"ann"}}`)
	if err := apiversion.API.Response(apiversion.V20270115, "risk", o); err != nil {
		t.Fatal(err)
	}
	same(t, `{"owner":{"userId":null,"name":"ann"}}`, o)
	o = object(t, `{"title":"t"}`)
	if err := apiversion.API.Event(apiversion.V20261201, "risk", o); err != nil {
		t.Fatal(err)
	}
	same(t, `{"title":"t"}`, o)
	o = object(t, `{"owner":"ann","title":"t"}`)
	if err := apiversion.API.Request(apiversion.V20261201, "risk", o); err != nil {
		t.Fatal(err)
	}
	same(t, `{"owner":{"name":"ann"},"title":"t"}`, o)
	if err := apiversion.API.Request(apiversion.V20261201, "risk", object(t, `{"owner":{"name":"ann"}}`)); !errors.Is(err, apiversion.ErrShape) {
		t.Errorf("an object owner in 2026-12-01: %v", err)
	}
}
