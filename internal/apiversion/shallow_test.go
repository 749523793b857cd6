package apiversion_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apiversion"
)

// TestShallowRenderingIsTheWholeDecode: rendering an answer in 2026-12-01 on its
// bytes (the changes' Members) gives the object the whole decode gave, for one
// risk, a page, an acceptance's snapshot and events, strings with brackets, quotes
// and escapes kept byte for byte, indented bodies and escaped keys alike.
func TestShallowRenderingIsTheWholeDecode(t *testing.T) {
	deep := apiversion.WholeDecode(apiversion.API)
	risk := `{"id":"risk_1","title":"a \"quoted\" {title} [x] \\ \u00e9","owner":{"userId":"usr_1","name":"ann@example.com"},"likelihood":3,"metadata":{"k":"}"},"livemode":true}`
	cases := []struct{ resource, body string }{
		{"risk", risk},
		{"risk", ` { "data" : [ ` + risk + ` , {"id":"risk_2","owner":{"userId":null,"name":""}} ], "hasMore":false } `},
		{"risk", `{"data":[]}`},
		{"acceptance", `{"id":"acc_1","riskSnapshot":` + risk + `}`},
		{"acceptance", `{"id":"acc_1","riskSnapshot":null}`},
		{"event", `{"id":"evt_1","type":"risk.updated","data":{"object":` + risk + `,"previousAttributes":{"owner":{"userId":null,"name":"bob"}}}}`},
		{"event", `{"data":[{"id":"evt_1","type":"risk.created","data":{"object":` + risk + `,"previousAttributes":null}},{"id":"evt_2","type":"attachment.created","data":{"object":{"id":"att_1"}}}]}`},
		{"event", `{"data":{"object":` + risk + `},"type":"risk.deleted"}`},
		{"risk", "{\n  \"hasMore\": true,\n  \"data\": [\n    {\n      \"title\": \"ends in a backslash \\\\\",\n      \"owner\": {\n        \"name\": \"ann\",\n        \"userId\": null\n      }\n    }\n  ]\n}\n"},
		{"risk", `{"\u006fwner":{"userId":null,"name":"escaped key"},"metadata":{"owner":{"name":"not the risk's"}}}`},
		{"acceptance", `{"id":"acc_1","riskSnapshot":{"owner":{"userId":null,"name":"\u003cb\u003e"}}}`},
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
		if raw := `[x] \\ \u00e9"`; strings.Contains(c.body, raw) && !strings.Contains(string(got), raw) {
			t.Errorf("%s: rendered %s, not the title's bytes as written", c.body, got)
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

// TestMembersRenderNewestFirst: two changes rendering the same member on its bytes
// apply newest first, each to what the one after it rendered, in answers, pages
// and events alike, as the whole decode applies them.
func TestMembersRenderNewestFirst(t *testing.T) {
	// 2027-03-01 made owner {"name"} of a string; 2027-01-15 made that string of
	// a one-element list.
	name := func(dst, v []byte) ([]byte, error) {
		var o struct{ Name json.RawMessage }
		if err := json.Unmarshal(v, &o); err != nil {
			return nil, err
		}
		return append(dst, o.Name...), nil
	}
	list := func(dst, v []byte) ([]byte, error) { return append(append(append(dst, '['), v...), ']'), nil }
	s, err := apiversion.New(versions, []apiversion.Change{
		{Version: "2027-01-15", Resources: []string{"risk"}, Members: map[string]apiversion.MemberRender{"owner": list}},
		{Version: "2027-03-01", Resources: []string{"risk"}, Members: map[string]apiversion.MemberRender{"owner": name}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ v, resource, body, want string }{
		{"2026-12-01", "risk", `{"id":"risk_1","owner":{"name":"ann"}}`, `{"id":"risk_1","owner":["ann"]}`},
		{"2027-01-15", "risk", `{"id":"risk_1","owner":{"name":"ann"}}`, `{"id":"risk_1","owner":"ann"}`},
		{"2027-03-01", "risk", `{"id":"risk_1","owner":{"name":"ann"}}`, `{"id":"risk_1","owner":{"name":"ann"}}`},
		{"2026-12-01", "risk", `{"data":[{"owner":{"name":"ann"}},{"owner":{"name":"bob"}}],"hasMore":false}`,
			`{"data":[{"owner":["ann"]},{"owner":["bob"]}],"hasMore":false}`},
		{"2026-12-01", "event", `{"type":"risk.updated","data":{"object":{"owner":{"name":"ann"}},"previousAttributes":{"owner":{"name":"bob"}}}}`,
			`{"type":"risk.updated","data":{"object":{"owner":["ann"]},"previousAttributes":{"owner":["bob"]}}}`},
	} {
		for name, set := range map[string]*apiversion.Set{"bytes": s, "whole": apiversion.WholeDecode(s)} {
			got, err := set.ResponseBody(apiversion.Version(tt.v), tt.resource, []byte(tt.body))
			if err != nil {
				t.Fatalf("%s %s: %v", name, tt.body, err)
			}
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal([]byte(tt.want), &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s, %s in %s (-want +got):\n%s", name, tt.body, tt.v, diff)
			}
		}
	}
}
