package riskhttp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// bigImportFile writes a CSV of about size bytes in at most rows rows, each valid
// (a description of up to 10,000 characters and metadata make up the size), to a
// temporary file removed when b ends, and returns its path and row count.
func bigImportFile(b *testing.B, size int64, rows int) (string, int) {
	f, err := os.CreateTemp("", "riskapi-import-*.csv")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.Remove(f.Name()) })
	per := max(200, int(size/int64(rows)))
	desc := min(10_000, per-150)
	meta := ""
	if rest := per - 150 - desc; rest > 0 {
		var kv []string
		for k := 0; rest > 0 && k < 50; k++ {
			n := min(490, rest)
			kv = append(kv, fmt.Sprintf(`""k%d"":""%s""`, k, strings.Repeat("m", n)))
			rest -= n + 12
		}
		meta = `"{` + strings.Join(kv, ",") + `}"`
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "externalId,title,description,likelihood,impact,metadata")
	body := strings.Repeat("d", desc)
	var written int64
	n := 0
	for ; n < rows && written < size; n++ {
		line := fmt.Sprintf("BIG-%d,Big risk %d,%s,%d,%d,%s\n", n, n, body, 1+n%5, 1+(n/5)%5, meta)
		w.WriteString(line)
		written += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return f.Name(), n
}

// postFile streams the file at path as the import's part "file" over a real
// connection, so that the client holds none of it; it returns the status and body.
func postFile(b *testing.B, url, bearer, path string) (int, []byte) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", "risks.csv")
		if err == nil {
			var f *os.File
			if f, err = os.Open(path); err == nil {
				_, err = io.Copy(part, f)
				f.Close()
			}
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest(http.MethodPost, url, pr)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+bearer)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

// rssNow is the process's VmRSS in bytes.
func rssNow(b *testing.B) int {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// BenchmarkImportMemory imports a CSV of IMPORT_MEM_BYTES bytes (128 MiB unless
// set) in at most 100,000 rows (MAX_IMPORT_ROWS) of large cells, streamed over a
// real connection, as a dry run and as a write into a fresh tenant, and reports the
// growth of the process's peak RSS (VmHWM over VmRSS before it) in MiB. The process
// is the server; the client streams the file from disk. Goal: at most 64 MiB per
// import whatever the file's size (contract section 17). The full size:
//
//	IMPORT_MEM_BYTES=1000000000 /work/heavy go test -timeout 60m -run '^$' \
//	  -bench ImportMemory/dry-run -benchtime 1x ./internal/risks/riskhttp/
func BenchmarkImportMemory(b *testing.B) {
	size := int64(envRows("IMPORT_MEM_BYTES", 128<<20))
	path, rows := bigImportFile(b, size, 100_000)
	env := apitest.New(b, func(c *config.Config) {
		c.Idempotency.Lease = 30 * time.Minute
		c.Uploads.ImportTimeout = 30 * time.Minute
		c.Uploads.MaxBytes = size + 1<<20
	})
	srv := env.Server()
	for _, mode := range []string{"dry-run", "write"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				a := env.Tenant(fmt.Sprintf("Memory %s %d", mode, i))
				query := "?dryRun=true"
				if mode == "write" {
					query = ""
				}
				resetPeakRSS(b)
				before := rssNow(b)
				start := time.Now()
				status, body := postFile(b, srv.URL+"/v2/risks/import"+query, a.Key, path)
				took := time.Since(start)
				if status != http.StatusCreated {
					b.Fatalf("status %d: %.300s", status, body)
				}
				var rep report
				json.Unmarshal(body, &rep)
				if rep.Created != rows {
					b.Fatalf("created %d, want %d", rep.Created, rows)
				}
				b.ReportMetric(float64(peakRSS(b)-before)/(1<<20), "rss-growth-MiB")
				b.ReportMetric(float64(size)/(1<<20), "file-MiB")
				b.ReportMetric(took.Seconds(), "import-s")
			}
		})
	}
}

// BenchmarkImportFairness has tenant A import IMPORT_FAIR_ROWS new risks (100,000
// unless set) over a real connection while tenant B creates risks from 4 clients
// one after another, and reports the longest of B's writes (b-write-max-s), their
// p99, how many failed (anything but 201), and the import's seconds. Goal (contract
// section 17): B's longest write at most 5 s on SQLite, 1 s on PostgreSQL, none
// failed.
func BenchmarkImportFairness(b *testing.B) {
	n := envRows("IMPORT_FAIR_ROWS", 100_000)
	var file strings.Builder
	file.WriteString("externalId,title,description,category,likelihood,impact,status,owner,treatment,reviewDate,metadata\n")
	for i := range n {
		fmt.Fprintf(&file, "IMP-%d,Imported risk %d,found in the %d audit,security,%d,%d,open,owner%d@example.com,mitigate,2026-%02d-15,\"{\"\"row\"\":\"\"%d\"\"}\"\n",
			i, i, i%7, 1+i%5, 1+(i/5)%5, i%13, 1+i%12, i)
	}
	path := b.TempDir() + "/fair.csv"
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	env := apitest.New(b, func(c *config.Config) {
		c.Idempotency.Lease = 10 * time.Minute
		c.RateLimit.RPS = 0
	})
	srv := env.Server()
	for i := 0; b.Loop(); i++ {
		a, bt := env.Tenant(fmt.Sprintf("Importer %d", i)), env.Tenant(fmt.Sprintf("Bystander %d", i))
		// B's writes alone first (the baseline of the ratios), then beside the import.
		alone, _ := bWrites(b, srv.URL, bt.Key, func() { time.Sleep(3 * time.Second) })
		var status int
		var body []byte
		var took time.Duration
		waits, failed := bWrites(b, srv.URL, bt.Key, func() {
			start := time.Now()
			status, body = postFile(b, srv.URL+"/v2/risks/import", a.Key, path)
			took = time.Since(start)
		})
		if status != http.StatusCreated {
			b.Fatalf("import: %d %.300s", status, body)
		}
		slices.Sort(alone)
		slices.Sort(waits)
		b.ReportMetric(waits[len(waits)-1].Seconds(), "b-write-max-s")
		b.ReportMetric(waits[len(waits)*99/100].Seconds(), "b-write-p99-s")
		b.ReportMetric(float64(len(waits)), "b-writes")
		b.ReportMetric(float64(failed), "b-failed")
		b.ReportMetric(took.Seconds(), "import-s")
		b.ReportMetric(waits[len(waits)*99/100].Seconds()/alone[len(alone)*99/100].Seconds(), "b-p99-x-alone")
		b.ReportMetric(waits[len(waits)-1].Seconds()/alone[len(alone)-1].Seconds(), "b-max-x-alone")
	}
}

// bWrites has tenant key's 4 clients create risks one after another (50 ms apart)
// while during runs, and returns how long each create took and how many failed
// (anything but 201).
func bWrites(b *testing.B, url, key string, during func()) ([]time.Duration, int) {
	done := make(chan struct{})
	var mu sync.Mutex
	var waits []time.Duration
	failed := 0
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-done:
					return
				default:
				}
				body, _ := json.Marshal(map[string]any{"title": fmt.Sprintf("B %d-%d", c, j), "likelihood": 2, "impact": 3})
				req, _ := http.NewRequest(http.MethodPost, url+"/v2/risks", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				start := time.Now()
				res, err := http.DefaultClient.Do(req)
				took := time.Since(start)
				ok := err == nil && res.StatusCode == http.StatusCreated
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				mu.Lock()
				waits = append(waits, took)
				if !ok {
					failed++
				}
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	during()
	close(done)
	wg.Wait()
	return waits, failed
}
