package e2e_test

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
	"github.com/riskapi/riskapi/internal/ids"
)

// TestKilledUploadSpoolIsSwept: an instance SIGKILLed while an attachment upload is
// being spooled leaves its spool file in UPLOAD_DIR/tmp; once the file is older
// than the orphan grace period (an hour at least; aged here by its modification
// time), the scheduled sweep of the restarted instance removes it
// (docs/deploying.md; attachments.OrphanSweeper), and a fresh spool file stays.
func TestKilledUploadSpoolIsSwept(t *testing.T) {
	url := dbtest.URL(t)
	creds := e2e.ProvisionT(t, url, t.Name())
	in := e2e.StartT(t, e2e.Config{DatabaseURL: url, Name: "api", Env: []string{"SWEEP_SCHEDULE=@every 1s"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := e2e.NewClient(creds.APIKey, 2)
	defer client.Close()
	a := client.CreateRisk(ctx, in.URL(), "", []byte(`{"title":"spooled upload"}`))
	riskID, err := e2e.RiskID(a.Body)
	if err != nil {
		t.Fatalf("create a risk: %s", a)
	}

	// An upload whose body stops halfway: the server spools what came.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL()+"/v2/risks/"+riskID+"/attachments", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+creds.APIKey)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	go func() { _, _ = http.DefaultClient.Do(req) }()
	part, err := mw.CreateFormFile("file", "half.txt")
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("spooled bytes\n", 4096))
	spool := filepath.Join(in.Dir(), "uploads", "tmp")
	var left []string
	for deadline := time.Now().Add(30 * time.Second); len(left) == 0; {
		if _, err := part.Write(chunk); err != nil {
			t.Fatalf("send the upload: %v\n%s", err, in.LogTail(4096))
		}
		left = spoolFiles(t, spool)
		if time.Now().After(deadline) {
			t.Fatalf("no spool file in %s after 30s of upload", spool)
		}
	}
	if err := in.Kill(); err != nil {
		t.Fatal(err)
	}
	pw.CloseWithError(fmt.Errorf("the instance was killed"))
	left = spoolFiles(t, spool)
	if len(left) == 0 {
		t.Fatal("the killed upload left no spool file; nothing to sweep")
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, f := range left {
		if err := os.Chtimes(filepath.Join(spool, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(spool, "upload-fresh-"+ids.New(ids.Attachment))
	if err := os.WriteFile(fresh, []byte("a request still spooling"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		remaining := spoolFiles(t, spool)
		if len(remaining) == 1 && filepath.Join(spool, remaining[0]) == fresh {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spool files %v 30s after the restart with a sweep every second; want only the fresh one (the killed "+
				"upload's %v swept)\n%s", remaining, left, in.LogTail(8<<10))
		}
	}
	t.Logf("the killed upload left %d spool file(s); the restarted instance's sweep removed them", len(left))
}

// spoolFiles lists the names of the files in dir (none if it does not exist).
func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}
