package e2e_test

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/dbtest"
	"github.com/riskapi/riskapi/internal/e2e"
)

// TestShutdownWithStalledUpload: SIGTERM while a client's upload has stalled half-way
// (its file already spooling to disk). The process exits 0 within 30 s — never
// waiting on the client for ever — and leaves no temporary upload file behind
// (README.md, Connections). A real process, a real connection, a real SIGTERM.
func TestShutdownWithStalledUpload(t *testing.T) {
	dbURL := dbtest.URL(t)
	creds := e2e.ProvisionT(t, dbURL, "shutdown")
	dir := t.TempDir()
	in := e2e.StartT(t, e2e.Config{DatabaseURL: dbURL, Dir: dir, Name: "api"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := e2e.NewClient(creds.APIKey, 1)
	defer c.Close()
	created := c.CreateRisk(ctx, in.URL(), "", []byte(`{"title":"has an upload"}`))
	riskID, err := e2e.RiskID(created.Body)
	if err != nil {
		t.Fatalf("create: %s", created)
	}

	u, _ := url.Parse(in.URL())
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const boundary = "stalled-boundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
	// Announce 64 MiB, send the part's head and 1 MiB of it, then nothing more.
	fmt.Fprintf(conn, "POST /v2/risks/%s/attachments HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Idempotency-Key: stalled-upload-1\r\nContent-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n",
		riskID, u.Host, creds.APIKey, boundary, 64<<20)
	if _, err := conn.Write(append([]byte(head), make([]byte, 1<<20)...)); err != nil {
		t.Fatal(err)
	}

	spool := filepath.Join(dir, "uploads", "tmp")
	deadline := time.Now().Add(20 * time.Second)
	for len(files(t, spool)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no spool file appeared in %s:\n%s", spool, in.LogTail(4096))
		}
		time.Sleep(20 * time.Millisecond)
	}

	start := time.Now()
	err = in.Stop()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("SIGTERM with a stalled upload: %v (after %s)\n%s", err, took, in.LogTail(4096))
	}
	if took > 30*time.Second {
		t.Errorf("exited %s after SIGTERM, want within 30 s", took.Round(time.Millisecond))
	}
	if left := files(t, spool); len(left) > 0 {
		t.Errorf("temporary upload files left behind: %v", left)
	}
	t.Logf("exited 0 %s after SIGTERM", took.Round(time.Millisecond))
}

// files lists the regular files under dir (none if it does not exist).
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
