package riskapi

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Go SDK's retry rule (shouldRetry, the waits of client.go) is the source; the
// TypeScript SDK's sdk-ts/src/retry.ts and the tables of docs/sdk.md,
// docs/sdk-typescript.md and docs/errors.md are copies a reader relies on. The SDKs
// cannot import each other, so this test reads the copies and fails when one
// drifts, naming it.

// goRetried lists the statuses shouldRetry retries.
func goRetried() []int {
	var out []int
	for s := 100; s < 600; s++ {
		if ok, _ := shouldRetry(&http.Response{StatusCode: s}, nil); ok {
			out = append(out, s)
		}
	}
	return out
}

func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile("../" + rel)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tsRetried lists the statuses classifyStatus of sdk-ts/src/retry.ts retries: the
// `case NNN:` labels whose branch returns { retry: true }. It fails the test when
// 2xx or the default branch would be retried.
func tsRetried(t *testing.T) []int {
	t.Helper()
	src := readRepoFile(t, "sdk-ts/src/retry.ts")
	start := strings.Index(src, "function classifyStatus(")
	if start < 0 {
		t.Fatal("sdk-ts/src/retry.ts: no function classifyStatus")
	}
	body := src[start:]
	body = body[:strings.Index(body, "\n}\n")]
	if !regexp.MustCompile(`status >= 200 && status < 300\) return \{ retry: false`).MatchString(body) {
		t.Error("sdk-ts/src/retry.ts: classifyStatus does not settle 2xx without retrying")
	}
	if !regexp.MustCompile(`default:\s*return \{ retry: false`).MatchString(body) {
		t.Error("sdk-ts/src/retry.ts: classifyStatus retries by default")
	}
	label := regexp.MustCompile(`^case (\d{3}):$`)
	verdict := regexp.MustCompile(`^return \{ retry: (true|false)`)
	var out, pending []int
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if m := label.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			pending = append(pending, n)
		} else if m := verdict.FindStringSubmatch(line); m != nil {
			if m[1] == "true" {
				out = append(out, pending...)
			}
			pending = nil
		}
	}
	slices.Sort(out)
	return out
}

// tsNumber returns the value of `export const name = <product of integers>;` in
// sdk-ts/src/retry.ts, or of a `const` of the same form.
func tsNumber(t *testing.T, name string) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(?:export )?const ` + name + ` = ([0-9_ *]+);`).FindStringSubmatch(readRepoFile(t, "sdk-ts/src/retry.ts"))
	if m == nil {
		t.Fatalf("sdk-ts/src/retry.ts: no numeric const %s", name)
	}
	v := int64(1)
	for _, f := range strings.Split(m[1], "*") {
		n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(f), "_", ""), 10, 64)
		if err != nil {
			t.Fatalf("sdk-ts/src/retry.ts: %s = %s: %v", name, m[1], err)
		}
		v *= n
	}
	return v
}

// docRetried lists the statuses the rows of a "Retry policy" table (docs/sdk.md,
// docs/sdk-typescript.md) retry: rows whose first cell begins with statuses and
// whose second says yes.
func docRetried(t *testing.T, rel string) []int {
	t.Helper()
	row := regexp.MustCompile(`(?m)^\| ((?:\d{3}(?:, )?)+)[^|]*\| (yes|no)`)
	var out []int
	for _, m := range row.FindAllStringSubmatch(readRepoFile(t, rel), -1) {
		if m[2] != "yes" {
			continue
		}
		for _, s := range strings.Split(m[1], ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(s))
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// TestRetryTableHasOneSource: both SDKs retry the same statuses and wait alike, and
// the documentation's tables say so.
func TestRetryTableHasOneSource(t *testing.T) {
	t.Parallel()
	want := goRetried()
	if got := tsRetried(t); !slices.Equal(want, got) {
		t.Errorf("sdk-ts/src/retry.ts retries statuses %v, the Go SDK %v", got, want)
	}
	for _, rel := range []string{"docs/sdk.md", "docs/sdk-typescript.md"} {
		if got := docRetried(t, rel); !slices.Equal(want, got) {
			t.Errorf("%s (Retry policy) says statuses %v are retried, the Go SDK retries %v", rel, got, want)
		}
	}
	summary := regexp.MustCompile("(?m)^\\| (\\d{3}) \\| `[A-Z_]+` \\|.*\\| (yes|no) \\|$")
	rows := summary.FindAllStringSubmatch(readRepoFile(t, "docs/errors.md"), -1)
	if len(rows) == 0 {
		t.Fatal("docs/errors.md: no summary rows")
	}
	for _, m := range rows {
		n, _ := strconv.Atoi(m[1])
		if retried := slices.Contains(want, n); (m[2] == "yes") != retried {
			t.Errorf("docs/errors.md (Summary) says the SDK retries %d: %s; the Go SDK: %v", n, m[2], retried)
		}
	}
	waits := []struct {
		ts     string
		goWait time.Duration
	}{{"BASE_WAIT_MS", baseWait}, {"DEFAULT_MAX_WAIT_MS", DefaultMaxWait}, {"MAX_RETRY_AFTER_MS", maxRetryAfter}}
	for _, w := range waits {
		if got := tsNumber(t, w.ts); got != w.goWait.Milliseconds() {
			t.Errorf("sdk-ts/src/retry.ts: %s = %d, the Go SDK's is %d ms", w.ts, got, w.goWait.Milliseconds())
		}
	}
}
