package apiversion_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apiversion"
)

// TestShallowRenderingIsTheWholeDecode: rendering an answer in 2026-12-01 by
// decoding only the members a change names gives the object the whole decode gave
// (the API's changes, which name them, against the same changes without Members),
// for one risk, a page, an acceptance's snapshot and events, strings with brackets
// and escapes kept byte for byte.
func TestShallowRenderingIsTheWholeDecode(t *testing.T) {
	var deepChanges []apiversion.Change
	for _, c := range apiversion.API.Changes() {
		c.Members = nil
		deepChanges = append(deepChanges, c)
	}
	deep, err := apiversion.New(apiversion.API.Versions(), deepChanges)
	if err != nil {
		t.Fatal(err)
	}
	risk := `{"id":"risk_1","title":"a \"quoted\" {title} [x] \\ \u00e9","owner":{"userId":"usr_1","name":"ann@example.com"},"likelihood":3,"metadata":{"k":"}"},"livemode":true}`
	cases := []struct{ resource, body string }{
		{"risk", risk},
		{"risk", ` { "data" : [ ` + risk + ` , {"id":"risk_2","owner":{"userId":null,"name":""}} ], "hasMore":false } `},
		{"risk", `{"data":[]}`},
		{"acceptance", `{"id":"acc_1","riskSnapshot":` + risk + `}`},
		{"acceptance", `{"id":"acc_1","riskSnapshot":null}`},
		{"event", `{"id":"evt_1","type":"risk.updated","data":{"object":` + risk + `,"previousAttributes":{"owner":{"userId":null,"name":"bob"}}}}`},
		{"event", `{"data":[{"id":"evt_1","type":"risk.created","data":{"object":` + risk + `,"previousAttributes":null}},{"id":"evt_2","type":"attachment.created","data":{"object":{"id":"att_1"}}}]}`},
	}
	for _, c := range cases {
		got, err := apiversion.API.ResponseBody(apiversion.V20261201, c.resource, []byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		want, err := deep.ResponseBody(apiversion.V20261201, c.resource, []byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: rendered %s: %v", c.body, got, err)
		}
		json.Unmarshal(want, &w)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s rendered shallowly differs (-whole +shallow):\n%s", c.body, diff)
		}
	}
	ev := `{"id":"evt_1","type":"risk.updated","data":{"object":` + risk + `}}`
	got, err := apiversion.API.EventBody(apiversion.V20261201, []byte(ev))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Data struct{ Object struct{ Title, Owner string } }
	}
	if err := json.Unmarshal(got, &e); err != nil || e.Data.Object.Owner != "ann@example.com" || e.Data.Object.Title != "a \"quoted\" {title} [x] \\ é" {
		t.Errorf("EventBody = %s, %v", got, err)
	}
}
