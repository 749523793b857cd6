package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
)

// TestEveryErrorIsAProblem: the answers the framework and the standard library write
// themselves — 405, the 416 and 412 of a download's Range and conditional headers —
// are problem+json like every other error (docs/errors.md), 405 names the allowed
// methods (HEAD with GET), and the inbound webhook's 401 carries WWW-Authenticate.
func TestEveryErrorIsAProblem(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")

	r := env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v2/risks", Bearer: a.Key}).ExpectProblem(405, "METHOD_NOT_ALLOWED")
	allow := r.Header().Get("Allow")
	for _, m := range []string{"GET", "HEAD", "POST"} {
		if !strings.Contains(allow, m) {
			t.Errorf("405 Allow = %q, lacks %s", allow, m)
		}
	}
	if strings.Contains(allow, "DELETE") {
		t.Errorf("405 Allow = %q names the refused method", allow)
	}

	var risk struct{ ID string }
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r"}}).Expect(201).Decode(&risk)
	body, ct := apitest.Multipart("", apitest.FilePart("file", "a.txt", "text/plain", "0123456789"))
	var att struct{ ID string }
	env.Upload("/v2/risks/"+risk.ID+"/attachments", a.Key, nil, body, ct).Expect(201).Decode(&att)
	content := "/v2/attachments/" + att.ID + "/content"

	r = env.Do(apitest.Request{Method: "GET", Path: content, Bearer: a.Key,
		Header: http.Header{"Range": {"bytes=100-200"}}}).ExpectProblem(416, "RANGE_NOT_SATISFIABLE")
	if got := r.Header().Get("Content-Range"); got != "bytes */10" {
		t.Errorf("416 Content-Range = %q, want bytes */10", got)
	}
	if d := r.Header().Get("Content-Disposition"); d != "" {
		t.Errorf("416 problem carries Content-Disposition %q: a browser would save the error as the file", d)
	}
	env.Do(apitest.Request{Method: "GET", Path: content, Bearer: a.Key,
		Header: http.Header{"If-Match": {`"not-the-etag"`}}}).ExpectProblem(412, "PRECONDITION_FAILED")
	// What still works: a satisfiable range.
	if r := env.Do(apitest.Request{Method: "GET", Path: content, Bearer: a.Key,
		Header: http.Header{"Range": {"bytes=2-4"}}}).Expect(206); r.Body.String() != "234" {
		t.Errorf("206 body = %q, want 234", r.Body.String())
	}

	r = env.Do(apitest.Request{Method: "POST", Path: "/webhooks/inbound/no-such-source", Body: `{}`}).ExpectProblem(401, "UNAUTHENTICATED")
	if r.Header().Get("WWW-Authenticate") == "" {
		t.Error("the inbound webhook's 401 has no WWW-Authenticate")
	}
}
