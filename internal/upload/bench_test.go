package upload_test

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
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

// uploadMiB scales BenchmarkKeyedUpload: 64 MiB by default, so that a plain
// -bench run stays short; -upload-mib 1024 is the 1 GiB run of docs/performance.md.
var uploadMiB = flag.Int64("upload-mib", 64, "file size of BenchmarkKeyedUpload's uploads, in MiB")

// uploadKind is one kind of upload BenchmarkKeyedUpload times.
type uploadKind int

const (
	unkeyed uploadKind = iota
	keyedFirst
	keyedReplay
)

// BenchmarkKeyedUpload streams uploads of -upload-mib generated MiB (never held in
// memory) through the real router over loopback, in interleaved rounds of three
// kinds — unkeyed, keyed first execution (a new key), keyed replay (the round's key
// again) — and reports wall-time ratios from those rounds, so a loaded machine
// slows every kind alike:
//
//   - keyed/unkeyed: goal ≤ 1.1 (the early look and the reservation cost nothing
//     next to the body);
//
//   - replay/unkeyed: goal ≤ 1.0 (a replay hashes the body and writes nothing);
//
//   - peak-HeapInuse-MiB, peak-HeapSys-MiB: runtime.MemStats sampled every 20 ms
//     over the whole process (server and in-process client), goal < 64 MiB.
//
//     go test -run '^$' -bench KeyedUpload -benchtime 3x ./internal/upload/ [-args -upload-mib 1024 -spool-dir /dev/shm]
func BenchmarkKeyedUpload(b *testing.B) {
	size := *uploadMiB << 20
	env := apitest.New(b, func(c *config.Config) {
		c.Uploads.MaxBytes = size + 1<<20 // the multipart framing on top of the file
		if *spoolDir != "" {
			c.Uploads.Dir = filepath.Join(*spoolDir, "riskapi-bench-uploads")
			b.Cleanup(func() { os.RemoveAll(c.Uploads.Dir) })
		}
	})
	a := env.Tenant("Acme")
	riskID := benchRisk(b, env, a.Key)
	url := env.Server().URL + "/v2/risks/" + riskID + "/attachments"
	orders := [][]uploadKind{{unkeyed, keyedFirst, keyedReplay}, {keyedFirst, keyedReplay, unkeyed}, {keyedFirst, unkeyed, keyedReplay}}
	var took [3]time.Duration
	heap := sampleMemStats(20 * time.Millisecond)
	b.SetBytes(3 * size)
	for i := 0; i < b.N; i++ {
		key := fmt.Sprintf("bench-upload-%d-%d", i, time.Now().UnixNano())
		var round [3]time.Duration
		for _, kind := range orders[i%len(orders)] {
			d, id := benchUpload(b, url, a.Key, kind, key, size)
			round[kind] = d
			took[kind] += d
			if kind != keyedReplay {
				os.Remove(filepath.Join(env.App.Config.Uploads.Dir, a.ID, id)) // keep the disk from filling
			}
		}
		b.Logf("round %d of %d: unkeyed %v, keyed/unkeyed %.3f, replay/unkeyed %.3f", i+1, b.N, round[unkeyed].Round(time.Millisecond),
			round[keyedFirst].Seconds()/round[unkeyed].Seconds(), round[keyedReplay].Seconds()/round[unkeyed].Seconds())
	}
	inuse, sys := heap.stop()
	b.ReportMetric(took[keyedFirst].Seconds()/took[unkeyed].Seconds(), "keyed/unkeyed")
	b.ReportMetric(took[keyedReplay].Seconds()/took[unkeyed].Seconds(), "replay/unkeyed")
	b.ReportMetric(float64(b.N*int(size))/took[unkeyed].Seconds()/1e6, "unkeyed-MB/s")
	b.ReportMetric(inuse, "peak-HeapInuse-MiB")
	b.ReportMetric(sys, "peak-HeapSys-MiB")
}

// benchRisk creates a risk and returns its ID.
func benchRisk(b *testing.B, env *apitest.Env, key string) string {
	res := env.Do(apitest.Request{Method: http.MethodPost, Path: "/v2/risks", Bearer: key,
		JSON: map[string]any{"title": "Vendor contract missing a DPA"}})
	res.T = b
	var r struct{ ID string }
	res.Expect(http.StatusCreated).Decode(&r)
	return r.ID
}

// benchUpload sends one upload of kind (key for the keyed kinds) with a file of size
// generated bytes, written into a pipe as the client sends it, and returns the wall
// time from sending to the response read, and the attachment's ID.
func benchUpload(b *testing.B, url, bearer string, kind uploadKind, key string, size int64) (time.Duration, string) {
	const boundary = "bench-upload-boundary"
	pr, pw := io.Pipe()
	go func() {
		mw := multipart.NewWriter(pw)
		mw.SetBoundary(boundary)
		part, err := mw.CreateFormFile("file", "big.bin")
		if err == nil {
			_, err = io.CopyBuffer(part, apitest.Generated(size), make([]byte, 256<<10))
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest(http.MethodPost, url, pr)
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
	req.Header.Set("Authorization", "Bearer "+bearer)
	want := "false"
	switch kind {
	case keyedReplay:
		want = "true"
		fallthrough
	case keyedFirst:
		req.Header.Set("Idempotency-Key", key)
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(start)
	if res.StatusCode != http.StatusCreated || (kind != unkeyed && res.Header.Get("Idempotent-Replayed") != want) {
		b.Fatalf("upload kind %d: %d (replayed %q) %s", kind, res.StatusCode, res.Header.Get("Idempotent-Replayed"), out)
	}
	var att struct{ ID string }
	json.Unmarshal(out, &att)
	return d, att.ID
}

// memSampler records the peaks of runtime.MemStats HeapInuse and HeapSys.
type memSampler struct {
	done, stopped chan struct{}
	inuse, sys    uint64
}

// sampleMemStats starts sampling every interval (ReadMemStats stops the world
// briefly: keep the interval coarse).
func sampleMemStats(interval time.Duration) *memSampler {
	runtime.GC()
	s := &memSampler{done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(s.stopped)
		t := time.NewTicker(interval)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			s.inuse, s.sys = max(s.inuse, m.HeapInuse), max(s.sys, m.HeapSys)
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends sampling and returns the peaks in MiB.
func (s *memSampler) stop() (inuse, sys float64) {
	close(s.done)
	<-s.stopped
	return float64(s.inuse) / (1 << 20), float64(s.sys) / (1 << 20)
}
