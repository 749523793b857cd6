package server_test

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
	"github.com/riskapi/riskapi/internal/dbtest"
)

// smallDisk mounts a tmpfs of size (mount's syntax, e.g. "1m") in a temporary folder
// and unmounts it when the test ends. It needs mount privileges (root); without them
// the test is skipped.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a full disk needs a small tmpfs, and mounting one failed: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file into dir until the disk has no space left, and returns a
// function that removes it.
func fill(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFullUploadDiskIs503: an upload to a full UPLOAD_DIR is 503 STORE_UNAVAILABLE
// with Retry-After and outcome not_executed, not 500 (issue 13, item 4); it leaves no
// spooled file, and once there is room again the same key runs it. Both stores.
func TestFullUploadDiskIs503(t *testing.T) {
	t.Parallel()
	dir := smallDisk(t, "1m")
	env := apitest.New(t, func(c *config.Config) { c.Uploads.Dir = dir })
	a := env.Tenant("Acme")
	var r struct{ ID string }
	apitest.Do(t, env, apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "t"}}).Expect(201).Decode(&r)
	body, ct := apitest.Multipart("b0undary", apitest.FilePart("file", "report.txt", "text/plain", strings.Repeat("x", 64<<10)))
	free := fill(t, dir)
	path := "/v2/risks/" + r.ID + "/attachments"
	for _, h := range []http.Header{nil, key("full-upload-1")} {
		res := env.Upload(path, a.Key, h, body, ct)
		checkUnavailable(t, res, "not_executed")
	}
	if files := slices.DeleteFunc(env.StoredFiles(), func(f string) bool { return f == "filler" }); len(files) > 0 {
		t.Errorf("a refused upload left files behind: %v", files)
	}
	free()
	res := env.Upload(path, a.Key, key("full-upload-1"), body, ct).Expect(201)
	if res.Header().Get("Idempotent-Replayed") != "false" {
		t.Errorf("Idempotent-Replayed = %q after not_executed, want false", res.Header().Get("Idempotent-Replayed"))
	}
}

// TestFullDatabaseDisk: SQLite on a full disk. Reads still work, but every write
// fails, so /readyz says 503 (issue 13, item 5) and writes are 503 STORE_UNAVAILABLE
// with outcome not_executed, not 500; with room again the instance is ready and the
// same key runs the write.
func TestFullDatabaseDisk(t *testing.T) {
	t.Parallel()
	if dbtest.Postgres() {
		t.Skip("the database's disk is the test's to fill on SQLite only")
	}
	dir := smallDisk(t, "8m")
	env := apitest.New(t, func(c *config.Config) { c.Database.URL = "sqlite://" + filepath.Join(dir, "riskapi.db") })
	a := env.Tenant("Acme")
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/readyz"}).Expect(200)
	if err := env.App.DB.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
		t.Fatal(err)
	}
	free := fill(t, dir)
	write := apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, Header: key("full-db-1"), JSON: map[string]any{"title": "t"}}

	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/v2/risks", Bearer: a.Key}).Expect(200)
	res := apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/readyz"})
	checkUnavailable(t, res, "not_executed")
	checkUnavailable(t, apitest.Do(t, env, write), "not_executed")
	unkeyed := write
	unkeyed.Header = nil
	checkUnavailable(t, apitest.Do(t, env, unkeyed), "not_executed")

	free()
	apitest.Do(t, env, apitest.Request{Method: "GET", Path: "/readyz"}).Expect(200)
	res = apitest.Do(t, env, write).Expect(201)
	if res.Header().Get("Idempotent-Replayed") != "false" {
		t.Errorf("Idempotent-Replayed = %q after not_executed, want false", res.Header().Get("Idempotent-Replayed"))
	}
}
