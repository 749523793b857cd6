package upload_test

import (
	"crypto/sha256"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/idempotency"
	"github.com/riskapi/riskapi/internal/upload"
)

// spoolDir lets the benchmarks spool to another file system, such as a tmpfs, to
// separate the cost of the code from the speed of the disk.
var spoolDir = flag.String("spool-dir", "", "folder to spool benchmark uploads to (default: a temporary folder)")

// BenchmarkHashBody1GiB measures the multipart fingerprint alone — parse, SHA-256 and
// spool to disk in one pass — on a 1 GiB file streamed in-process (no network, no
// goroutine producing it), against plain SHA-256 of the same bytes in the same run.
//
//	go test -run '^$' -bench HashBody1GiB -benchtime 1x ./internal/upload/ [-args -spool-dir /dev/shm]
func BenchmarkHashBody1GiB(b *testing.B) {
	const size = 1 << 30
	const boundary = "bench-boundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	dir := b.TempDir()
	if *spoolDir != "" {
		dir = filepath.Join(*spoolDir, "riskapi-bench-spool")
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	cfg := upload.Config{Dir: dir, Logger: quiet}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		b.Fatal(err)
	}
	var hashTook time.Duration
	e := echo.New()
	e.POST("/u", func(c echo.Context) error {
		start := time.Now()
		err := upload.HashBody(c, sha256.New(), idempotency.HashKeep)
		hashTook += time.Since(start)
		return err
	}, mw)
	var shaTook time.Duration
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		io.CopyBuffer(sha256.New(), apitest.Generated(size), make([]byte, 256<<10))
		shaTook += time.Since(start)
		body := io.MultiReader(strings.NewReader(head), apitest.Generated(size), strings.NewReader(tail))
		req := httptest.NewRequest(http.MethodPost, "/u", body)
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		rec := httptest.NewRecorder()
		b.StartTimer()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
	n := float64(b.N) * size
	b.ReportMetric(n/shaTook.Seconds()/1e6, "sha256-MB/s")
	b.ReportMetric(n/hashTook.Seconds()/1e6, "fingerprint-MB/s")
	b.ReportMetric(shaTook.Seconds()/hashTook.Seconds(), "ratio-vs-sha256")
}
