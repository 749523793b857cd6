package attachmenthttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// TestResponsesMatchSpec: what the attachment routes answer is what
// docs/openapi.yaml says, status by status.
func TestResponsesMatchSpec(t *testing.T) {
	t.Parallel()
	spec := apitest.LoadSpec(t, "../../../docs/openapi.yaml")
	env := apitest.New(t, func(c *config.Config) { c.Uploads.MaxBytes = 64 << 10 })
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	riskID := newRisk(t, env, a.Key)
	file := apitest.FilePart("file", "a.txt", "text/plain", "hello")
	uploadPath := "/v2/risks/" + riskID + "/attachments"

	check := func(name string, method, path string, header http.Header, res *apitest.Response, status int) {
		t.Helper()
		if res.Code != status {
			t.Errorf("%s: status %d, want %d: %s", name, res.Code, status, res.Body)
			return
		}
		spec.Check(t, method, path, header, res)
	}
	post := func(name, key, bearer string, status int, parts ...apitest.Part) *apitest.Response {
		t.Helper()
		var h http.Header
		if key != "" {
			h = keyed(key)
		}
		res := upload(t, env, riskID, bearer, h, parts...)
		check(name, http.MethodPost, uploadPath, h, res, status)
		return res
	}
	var att attachment
	post("created", "spec-key-1", a.Key, 201, file).Decode(&att)
	post("replayed", "spec-key-1", a.Key, 201, file)
	post("key reused", "spec-key-1", a.Key, 422, apitest.FilePart("file", "b.txt", "text/plain", "other"))
	post("no file", "", a.Key, 400, apitest.FieldPart("description", "d"))
	post("other tenant", "", b.Key, 404, file)
	post("read-only key", "", a.ReadKey, 403, file)
	post("too large", "", a.Key, 413, apitest.FilePart("file", "big", "", strings.Repeat("x", 128<<10)))
	post("no key", "", "", 401, file)

	get := func(name, path, bearer string, header http.Header, status int) {
		t.Helper()
		h := http.Header{"Authorization": {"Bearer " + bearer}}
		for k, v := range header {
			h[k] = v
		}
		res := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Header: h})
		res.T = t
		check(name, http.MethodGet, path, header, res, status)
	}
	get("list", uploadPath, a.Key, nil, 200)
	get("list page", uploadPath+"?limit=1", a.Key, nil, 200)
	get("list bad limit", uploadPath+"?limit=0", a.Key, nil, 400)
	get("list other tenant", uploadPath, b.Key, nil, 404)
	content := "/v2/attachments/" + att.ID + "/content"
	get("content", content, a.Key, nil, 200)
	get("content range", content, a.Key, http.Header{"Range": {"bytes=0-1"}}, 206)
	get("content other tenant", content, b.Key, nil, 404)
}
