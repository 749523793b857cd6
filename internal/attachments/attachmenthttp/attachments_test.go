package attachmenthttp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// attachment is the response shape.
type attachment struct {
	ID          string    `json:"id"`
	RiskID      string    `json:"riskId"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
}

// newRisk creates a risk with key and returns its ID.
func newRisk(t testing.TB, env *apitest.Env, key string) string {
	t.Helper()
	var r struct{ ID string }
	res := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key,
		JSON: map[string]any{"title": "Vendor contract missing a DPA"}})
	res.T = t
	res.Expect(http.StatusCreated).Decode(&r)
	return r.ID
}

func keyed(key string) http.Header { return http.Header{"Idempotency-Key": {key}} }

// upload sends parts to the risk's attachments with bearer and header.
func upload(t *testing.T, env *apitest.Env, riskID, bearer string, header http.Header, parts ...apitest.Part) *apitest.Response {
	t.Helper()
	body, ct := apitest.Multipart("", parts...)
	res := env.Upload("/v2/risks/"+riskID+"/attachments", bearer, header, body, ct)
	res.T = t
	return res
}

// list returns the risk's attachments.
func list(t *testing.T, env *apitest.Env, riskID, bearer string) []attachment {
	t.Helper()
	var l struct{ Data []attachment }
	res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/risks/" + riskID + "/attachments", Bearer: bearer})
	res.T = t
	res.Expect(http.StatusOK).Decode(&l)
	return l.Data
}

// stored returns the files under UPLOAD_DIR, failing the test on any temporary file
// left behind: every request removes its own when it ends.
func stored(t *testing.T, env *apitest.Env) []string {
	t.Helper()
	files := env.StoredFiles()
	for _, f := range files {
		if strings.HasPrefix(f, "tmp/") {
			t.Errorf("temporary file left behind: %s", f)
		}
	}
	return files
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestUploadListDownload(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	const content = "%PDF-1.7 the DPA request\n"

	res := upload(t, env, riskID, a.Key, nil,
		apitest.FieldPart("description", "Email to the vendor"),
		apitest.FilePart("file", "dpa-request.pdf", "application/pdf", content)).Expect(http.StatusCreated)
	var got attachment
	res.Decode(&got)
	want := attachment{ID: got.ID, RiskID: riskID, Filename: "dpa-request.pdf", ContentType: "application/pdf",
		Size: int64(len(content)), SHA256: sha(content), Description: "Email to the vendor", CreatedAt: got.CreatedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attachment (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got.ID, "att_") {
		t.Errorf("id %q", got.ID)
	}
	if loc := res.Header().Get("Location"); loc != "/v2/attachments/"+got.ID+"/content" {
		t.Errorf("Location = %q", loc)
	}
	if res.Header().Get("Idempotent-Replayed") != "" {
		t.Error("an unkeyed request carries Idempotent-Replayed")
	}

	// Listed, on both versions, exactly as returned.
	if diff := cmp.Diff([]attachment{got}, list(t, env, riskID, a.Key)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	// Downloaded: the bytes, their type, and headers that keep a browser from running
	// them on the API's origin.
	dl := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/attachments/" + got.ID + "/content", Bearer: a.Key})
	dl.T = t
	dl.Expect(http.StatusOK)
	if dl.Body.String() != content {
		t.Errorf("download = %q", dl.Body.String())
	}
	for h, want := range map[string]string{
		"Content-Type":           "application/pdf",
		"Content-Length":         "25",
		"X-Content-Type-Options": "nosniff",
		"Content-Disposition":    `attachment; filename=dpa-request.pdf`,
		"ETag":                   `"` + sha(content) + `"`,
	} {
		if got := dl.Header().Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	// The bytes sit under the tenant and the attachment's ID, nowhere else.
	if diff := cmp.Diff([]string{a.ID + "/" + got.ID}, stored(t, env)); diff != "" {
		t.Errorf("stored files (-want +got):\n%s", diff)
	}

	// /v1 serves the same, to a session.
	var s struct{ Token string }
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v1/sessions",
		JSON: map[string]string{"email": a.Email, "password": a.Password}}).Expect(http.StatusCreated).Decode(&s)
	v1 := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/attachments/" + got.ID + "/content", Bearer: s.Token})
	v1.T = t
	if v1.Expect(http.StatusOK).Body.String() != content {
		t.Error("v1 download differs")
	}
	body, ct := apitest.Multipart("", apitest.FilePart("file", "v1.txt", "text/plain", "from a browser"))
	up := env.Upload("/v1/risks/"+riskID+"/attachments", s.Token, nil, body, ct)
	up.T = t
	if loc := up.Expect(http.StatusCreated).Header().Get("Location"); !strings.HasPrefix(loc, "/v1/attachments/") {
		t.Errorf("v1 Location = %q", loc)
	}
}

func TestDownloadRange(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	var att attachment
	upload(t, env, riskID, a.Key, nil, apitest.FilePart("file", "n.txt", "text/plain; charset=utf-8", "0123456789")).
		Expect(http.StatusCreated).Decode(&att)
	res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/attachments/" + att.ID + "/content", Bearer: a.Key,
		Header: http.Header{"Range": {"bytes=2-4"}}})
	res.T = t
	if res.Expect(http.StatusPartialContent).Body.String() != "234" {
		t.Errorf("range = %q", res.Body.String())
	}
	if ct := res.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
}

// TestKeyedUploadReplays: the same key with the same file bytes is replayed —
// byte-identical, marked, one row, one file — also when the boundary differs.
func TestKeyedUploadReplays(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	parts := []apitest.Part{apitest.FieldPart("description", "scan"), apitest.FilePart("file", "scan.png", "image/png", "\x89PNG bytes")}

	send := func(boundary string, parts ...apitest.Part) *apitest.Response {
		body, ct := apitest.Multipart(boundary, parts...)
		res := env.Upload("/v2/risks/"+riskID+"/attachments", a.Key, keyed("upload-key-1"), body, ct)
		res.T = t
		return res
	}
	first := send("first-boundary", parts...).Expect(http.StatusCreated)
	if h := first.Header().Get("Idempotent-Replayed"); h != "false" {
		t.Errorf("first Idempotent-Replayed = %q", h)
	}
	for name, retry := range map[string]*apitest.Response{
		"same body":       send("first-boundary", parts...),
		"other boundary":  send("a-completely-different-boundary", parts...),
		"names reordered": send("b", parts[1], parts[0]),
	} {
		retry.Expect(http.StatusCreated)
		if h := retry.Header().Get("Idempotent-Replayed"); h != "true" {
			t.Errorf("%s: Idempotent-Replayed = %q", name, h)
		}
		if retry.Body.String() != first.Body.String() {
			t.Errorf("%s: replayed body differs:\n%s\n%s", name, first.Body, retry.Body)
		}
	}
	if n := len(list(t, env, riskID, a.Key)); n != 1 {
		t.Errorf("%d attachments, want 1", n)
	}
	if n := len(stored(t, env)); n != 1 {
		t.Errorf("%d files stored, want 1", n)
	}
}

// TestKeyedUploadKeyReused: the same key with the same fields but another file (bytes,
// name or type) is 422, and stores nothing.
func TestKeyedUploadKeyReused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	desc := apitest.FieldPart("description", "contract")
	upload(t, env, riskID, a.Key, keyed("reuse-key-1"), desc,
		apitest.FilePart("file", "contract.pdf", "application/pdf", "version 1")).Expect(http.StatusCreated)

	tests := []struct {
		name string
		file apitest.Part
	}{
		{"other bytes", apitest.FilePart("file", "contract.pdf", "application/pdf", "version 2")},
		{"other filename", apitest.FilePart("file", "contract-v2.pdf", "application/pdf", "version 1")},
		{"other MIME type", apitest.FilePart("file", "contract.pdf", "application/octet-stream", "version 1")},
		{"no MIME type", apitest.FilePart("file", "contract.pdf", "", "version 1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upload(t, env, riskID, a.Key, keyed("reuse-key-1"), desc, tt.file).
				ExpectProblem(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
		})
	}
	if n := len(list(t, env, riskID, a.Key)); n != 1 {
		t.Errorf("%d attachments, want 1", n)
	}
	if n := len(stored(t, env)); n != 1 {
		t.Errorf("%d files stored, want 1", n)
	}
}

func TestUploadValidation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	file := apitest.FilePart("file", "a.txt", "text/plain", "x")
	tests := []struct {
		name      string
		parts     []apitest.Part
		wantField string
	}{
		{"no file", []apitest.Part{apitest.FieldPart("description", "d")}, "file"},
		{"empty form", nil, "file"},
		{"unknown field", []apitest.Part{file, apitest.FieldPart("title", "t")}, "title"},
		{"unknown file part", []apitest.Part{apitest.FilePart("attachment", "a", "", "x")}, "attachment"},
		{"two files", []apitest.Part{file, file}, "file"},
		{"two descriptions", []apitest.Part{file, apitest.FieldPart("description", "1"), apitest.FieldPart("description", "2")}, "description"},
		{"file as a field", []apitest.Part{apitest.FieldPart("file", "x")}, "file"},
		{"no filename left", []apitest.Part{apitest.FilePart("file", "../", "", "x")}, "file"},
		{"description not UTF-8", []apitest.Part{file, apitest.FieldPart("description", "\xff\xfe")}, "description"},
		{"description too long", []apitest.Part{file, apitest.FieldPart("description", strings.Repeat("é", 10001))}, "description"},
		{"description over 64 KiB", []apitest.Part{file, apitest.FieldPart("description", strings.Repeat("x", 64<<10+1))}, "description"},
	}
	for _, tt := range tests {
		for _, key := range []string{"", "validation-" + strings.ReplaceAll(tt.name, " ", "-")} {
			t.Run(tt.name+"/key="+key, func(t *testing.T) {
				var h http.Header
				if key != "" {
					h = keyed(key)
				}
				res := upload(t, env, riskID, a.Key, h, tt.parts...).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
				var p struct{ Errors []struct{ Field string } }
				res.Decode(&p)
				if len(p.Errors) == 0 || p.Errors[0].Field != tt.wantField {
					t.Errorf("errors %+v, want field %q", p.Errors, tt.wantField)
				}
			})
		}
	}
	// Not multipart at all.
	env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks/" + riskID + "/attachments", Bearer: a.Key,
		JSON: map[string]string{"file": "x"}}).ExpectProblem(http.StatusBadRequest, "VALIDATION_FAILED")
	if n := len(list(t, env, riskID, a.Key)); n != 0 {
		t.Errorf("%d attachments stored by refused uploads", n)
	}
	if files := stored(t, env); len(files) != 0 {
		t.Errorf("files stored by refused uploads: %v", files)
	}
}

// TestFilenamesAreNotPaths: whatever the client calls its file, the bytes are stored
// under the attachment's ID, and the name kept is a clean base name.
func TestFilenamesAreNotPaths(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	tests := map[string]string{
		"../../../etc/passwd":             "passwd",
		`..\..\windows\win.ini`:           "win.ini",
		"/abs/path/report.pdf":            "report.pdf",
		"invoice\u202Efdp.exe":            "invoicefdp.exe",
		"  spaced.txt  ":                  "spaced.txt",
		strings.Repeat("ü", 200) + ".txt": strings.Repeat("ü", 127),
	}
	for in, want := range tests {
		var att attachment
		upload(t, env, riskID, a.Key, nil, apitest.FilePart("file", in, "", "x")).Expect(http.StatusCreated).Decode(&att)
		if att.Filename != want {
			t.Errorf("filename %q stored as %q, want %q", in, att.Filename, want)
		}
	}
	// Control characters cannot appear in a header line, but RFC 2231 encoding
	// (filename*=) carries them; they are dropped too.
	body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''..%2F..%2Fevil%1Bname%7F%0D%0A.txt\r\n\r\nx\r\n--b--\r\n"
	var att attachment
	up := env.Upload("/v2/risks/"+riskID+"/attachments", a.Key, nil, []byte(body), "multipart/form-data; boundary=b")
	up.T = t
	up.Expect(http.StatusCreated).Decode(&att)
	if att.Filename != "evilname.txt" {
		t.Errorf("RFC 2231 filename stored as %q", att.Filename)
	}
	for _, f := range stored(t, env) {
		dir, name := filepath.Split(f)
		if dir != a.ID+"/" || !strings.HasPrefix(name, "att_") {
			t.Errorf("file stored at %s", f)
		}
	}
}

// TestTenantIsolation: another tenant's risk or attachment is 404 on every route, and
// an upload to it stores nothing.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	riskID := newRisk(t, env, a.Key)
	var att attachment
	upload(t, env, riskID, a.Key, nil, apitest.FilePart("file", "a.txt", "", "secret")).Expect(http.StatusCreated).Decode(&att)

	file := apitest.FilePart("file", "b.txt", "", "intruder")
	upload(t, env, riskID, b.Key, nil, file).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	upload(t, env, riskID, b.Key, keyed("isolation-key"), file).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	upload(t, env, "risk_0193b2c4d5e6f708192a3b4c5d6e7f80", a.Key, nil, file).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	upload(t, env, "not-an-id", a.Key, nil, file).ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	for _, path := range []string{"/v2/risks/" + riskID + "/attachments", "/v2/attachments/" + att.ID + "/content",
		"/v2/attachments/att_0193b2c4d5e6f708192a3b4c5d6e7f80/content", "/v2/attachments/x/content"} {
		res := env.Do(apitest.Request{Method: http.MethodGet, Path: path, Bearer: b.Key})
		res.T = t
		res.ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	}
	if files := stored(t, env); len(files) != 1 {
		t.Errorf("stored files %v, want only Acme's", files)
	}
	// A read-only key may list and download, not upload.
	upload(t, env, riskID, a.ReadKey, nil, file).ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	if n := len(list(t, env, riskID, a.ReadKey)); n != 1 {
		t.Errorf("read-only key lists %d", n)
	}
}

// TestOverLimit: past MAX_UPLOAD_BYTES the upload is 413 — at once when
// Content-Length says so, mid-stream otherwise — and leaves no temporary file, keyed
// or not; the key stays free for a smaller retry.
func TestOverLimit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.Uploads.MaxBytes = 256 << 10 })
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	big, ct := apitest.Multipart("", apitest.FilePart("file", "big.bin", "", strings.Repeat("x", 1<<20)))
	for _, key := range []string{"", "over-limit-key"} {
		for _, chunked := range []bool{false, true} {
			var body io.Reader = strings.NewReader(string(big))
			if chunked {
				body = io.MultiReader(body) // hides the length: no Content-Length
			}
			req := httptest.NewRequest(http.MethodPost, "/v2/risks/"+riskID+"/attachments", body)
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Authorization", "Bearer "+a.Key)
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			res := env.DoRaw(req)
			res.T = t
			res.ExpectProblem(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
			if files := env.StoredFiles(); len(files) != 0 {
				t.Errorf("key %q chunked %v: files left: %v", key, chunked, files)
			}
		}
	}
	upload(t, env, riskID, a.Key, keyed("over-limit-key"), apitest.FilePart("file", "small.bin", "", "x")).
		Expect(http.StatusCreated)
}

// TestDeletingARiskRemovesItsAttachments: the rows go with the risk at once, the
// bytes with the next sweep after the grace period.
func TestDeletingARiskRemovesItsAttachments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	gone, kept := newRisk(t, env, a.Key), newRisk(t, env, a.Key)
	var att, keep attachment
	upload(t, env, gone, a.Key, nil, apitest.FilePart("file", "a.txt", "", "a")).Expect(http.StatusCreated).Decode(&att)
	upload(t, env, kept, a.Key, nil, apitest.FilePart("file", "b.txt", "", "b")).Expect(http.StatusCreated).Decode(&keep)
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v2/risks/" + gone, Bearer: a.Key,
		Header: keyed("delete-risk-key")}).Expect(http.StatusNoContent)

	res := env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/attachments/" + att.ID + "/content", Bearer: a.Key})
	res.T = t
	res.ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	age(t, env, 2*time.Hour)
	if _, err := env.App.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a.ID + "/" + keep.ID}, stored(t, env)); diff != "" {
		t.Errorf("stored after sweep (-want +got):\n%s", diff)
	}
}

// TestOrphanSweep: the sweep removes bytes without a row (and stale spool files) once
// older than the grace period, and keeps live attachments and recent files.
func TestOrphanSweep(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	var live attachment
	upload(t, env, riskID, a.Key, nil, apitest.FilePart("file", "live.txt", "", "live")).Expect(http.StatusCreated).Decode(&live)

	dir := env.App.Config.Uploads.Dir
	write := func(rel string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("orphan"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	orphan := a.ID + "/att_0193b2c4d5e6f708192a3b4c5d6e7f80"
	write(orphan)
	write("tmp/upload-123")
	write(a.ID + "/not-an-attachment") // not ours to judge

	// Before the grace period has passed nothing goes: a transaction may still
	// commit the row of a file it has just moved into place.
	if _, err := env.App.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(env.StoredFiles()); n != 4 {
		t.Fatalf("the sweep removed files younger than the grace period: %v", env.StoredFiles())
	}
	age(t, env, 2*time.Hour)
	recent := a.ID + "/att_0193b2c4d5e6f708192a3b4c5d6e7f81"
	write(recent)
	n, err := env.App.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("Sweep counted %d: it counts idempotency records only", n)
	}
	want := []string{a.ID + "/" + live.ID, a.ID + "/not-an-attachment", recent}
	got := env.StoredFiles()
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files after sweep (-want +got):\n%s", diff)
	}
	if !strings.Contains(env.Logs.String(), "attachment orphan removed") {
		t.Error("orphan removals are not logged")
	}
}

// age sets every stored file's modification time d into the past.
func age(t *testing.T, env *apitest.Env, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	for _, f := range env.StoredFiles() {
		p := filepath.Join(env.App.Config.Uploads.Dir, filepath.FromSlash(f))
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeleteAttachment: a deleted attachment's content is 404 at once, another
// tenant cannot delete it, attachment.deleted is emitted once with the attachment as
// it was, and the bytes go with the next sweep after the grace period.
func TestDeleteAttachment(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.Tenant("Acme"), env.Tenant("Beta")
	riskID := newRisk(t, env, a.Key)
	var att, keep attachment
	upload(t, env, riskID, a.Key, nil, apitest.FilePart("file", "a.txt", "", "a")).Expect(http.StatusCreated).Decode(&att)
	upload(t, env, riskID, a.Key, nil, apitest.FilePart("file", "b.txt", "", "b")).Expect(http.StatusCreated).Decode(&keep)
	del := func(key, version string) *apitest.Response {
		return env.Do(apitest.Request{Method: http.MethodDelete, Path: "/" + version + "/attachments/" + att.ID, Bearer: key})
	}
	del(b.Key, "v2").ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	del(a.ReadKey, "v2").ExpectProblem(http.StatusForbidden, "FORBIDDEN")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/attachments/" + att.ID + "/content", Bearer: a.Key}).
		Expect(http.StatusOK)
	del(a.Key, "v2").Expect(http.StatusNoContent)
	del(a.Key, "v2").ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/attachments/" + att.ID + "/content", Bearer: a.Key}).
		ExpectProblem(http.StatusNotFound, "NOT_FOUND")
	var events struct {
		Data []struct {
			Data struct{ Object attachment }
		}
	}
	env.Do(apitest.Request{Method: http.MethodGet, Path: "/v2/events?type=attachment.deleted", Bearer: a.Key}).
		Expect(http.StatusOK).Decode(&events)
	if len(events.Data) != 1 || events.Data[0].Data.Object.ID != att.ID || events.Data[0].Data.Object.Filename != "a.txt" {
		t.Errorf("attachment.deleted events = %+v, want one with the attachment", events.Data)
	}
	if len(stored(t, env)) != 2 {
		t.Errorf("bytes removed at once (%v): a rolled-back deletion would have lost them", stored(t, env))
	}
	age(t, env, 2*time.Hour)
	if _, err := env.App.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a.ID + "/" + keep.ID}, stored(t, env)); diff != "" {
		t.Errorf("stored after sweep (-want +got):\n%s", diff)
	}
	// The v1 route deletes as well.
	env.Do(apitest.Request{Method: http.MethodDelete, Path: "/v1/attachments/" + keep.ID,
		Bearer: apitest.Login(t, env, a).Token}).Expect(http.StatusNoContent)
}
