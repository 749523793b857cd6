package attachmenthttp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/idempotency"
)

// These tests run over a real loopback connection on the store under test
// (TEST_DATABASE_URL): a keyed upload is looked up before its body is read
// (docs/idempotency.md, Large bodies).

// TestInFlightKeyIs409BeforeTheBodyIsSent: while another request holds a key, an
// upload under it is refused with 409 and Retry-After as soon as its headers are in —
// the client has sent a few bytes of a 64 MiB body and never sends the rest.
func TestInFlightKeyIs409BeforeTheBodyIsSent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	srv := env.Server()
	path := "/v2/risks/" + riskID + "/attachments"

	// Another request holds the key: its reservation, as the engine takes it.
	rk := idempotency.RecordKey{Scope: a.ID, Method: http.MethodPost, Path: path, Key: "in-flight-key-1"}
	obs, err := env.App.Idempotency.Reserve(context.Background(), rk)
	if err != nil || obs.Held == nil {
		t.Fatalf("reserve: %v, held %v", err, obs.Held != nil)
	}
	released := false
	release := func() {
		if !released {
			released = true
			obs.Held.Release()
		}
	}
	defer release()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const boundary = "in-flight-boundary"
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: riskapi\r\nAuthorization: Bearer %s\r\nIdempotency-Key: %s\r\n"+
		"Content-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n", path, a.Key, rk.Key, boundary, 64<<20)
	fmt.Fprintf(conn, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\nthe first few bytes", boundary)

	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body is unsent (the server waits for it): %v", err)
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	res.Body.Close()
	if res.StatusCode != http.StatusConflict || !strings.Contains(string(body), "IDEMPOTENCY_REQUEST_IN_PROGRESS") {
		t.Fatalf("got %d %s, want 409 IDEMPOTENCY_REQUEST_IN_PROGRESS", res.StatusCode, body)
	}
	if res.Header.Get("Retry-After") == "" {
		t.Error("409 without Retry-After")
	}

	// Once the holder is done, the retry runs.
	release()
	upload(t, env, riskID, a.Key, keyed(rk.Key), apitest.FilePart("file", "big.bin", "", "all of it")).Expect(http.StatusCreated)
	if n := len(stored(t, env)); n != 1 {
		t.Errorf("%d files stored, want 1", n)
	}
}

// TestReplayAnd422WriteNothingToDisk: a keyed upload's replay and its 422 are answered
// while the spool folder cannot even be created (an unkeyed upload then fails, the
// control), so neither wrote a byte to disk; the replay is byte-identical to the
// first response, headers included.
func TestReplayAnd422WriteNothingToDisk(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	srv := env.Server()
	url := srv.URL + "/v2/risks/" + riskID + "/attachments"
	file := strings.Repeat("0123456789abcdef", 192<<10) // 3 MiB: several of the spool's chunks

	send := func(boundary, key, content string) (*http.Response, []byte) {
		t.Helper()
		body, ct := apitest.Multipart(boundary, apitest.FieldPart("description", "scan"),
			apitest.FilePart("file", "scan.bin", "application/octet-stream", content))
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+a.Key)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, out
	}
	first, firstBody := send("first-boundary", "disk-free-key-1", file)
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("first upload: %d %s", first.StatusCode, firstBody)
	}

	// From here on the spool folder cannot be created: a regular file sits at its path.
	spoolDir := filepath.Join(env.App.Config.Uploads.Dir, "tmp")
	if err := os.RemoveAll(spoolDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spoolDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res, out := send("control", "", file); res.StatusCode < 500 {
		t.Fatalf("control: an unkeyed upload answered %d %s with no spool folder; the test proves nothing", res.StatusCode, out)
	}

	again, againBody := send("another-boundary", "disk-free-key-1", file)
	if again.StatusCode != first.StatusCode || !bytes.Equal(againBody, firstBody) ||
		again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
		t.Fatalf("replay: %d %s (Location %q), want the first response byte for byte: %d %s (Location %q)",
			again.StatusCode, againBody, again.Header.Get("Location"), first.StatusCode, firstBody, first.Header.Get("Location"))
	}
	if h := again.Header.Get("Idempotent-Replayed"); h != "true" {
		t.Errorf("replay: Idempotent-Replayed = %q", h)
	}
	reused, reusedBody := send("first-boundary", "disk-free-key-1", file[1:]+"!")
	if reused.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(reusedBody), "IDEMPOTENCY_KEY_REUSED") {
		t.Fatalf("other bytes under the key: %d %s, want 422 IDEMPOTENCY_KEY_REUSED", reused.StatusCode, reusedBody)
	}

	if err := os.Remove(spoolDir); err != nil {
		t.Fatal(err)
	}
	if n := len(stored(t, env)); n != 1 {
		t.Errorf("%d files stored, want 1", n)
	}
	if n := len(list(t, env, riskID, a.Key)); n != 1 {
		t.Errorf("%d attachments, want 1", n)
	}
}

// TestRacingKeyedUploadsStoreOne: uploads of one key sent at once — some refused by
// the early look, some only by the reservation, some replayed — store exactly one
// attachment; every answer is the 201 that stored it, its replay, or a 409.
func TestRacingKeyedUploadsStoreOne(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Tenant("Acme")
	riskID := newRisk(t, env, a.Key)
	srv := env.Server()
	body, ct := apitest.Multipart("race", apitest.FilePart("file", "race.bin", "", strings.Repeat("r", 1<<20)))
	const n = 8
	type answer struct {
		status   int
		replayed string
		body     string
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v2/risks/"+riskID+"/attachments", bytes.NewReader(body))
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Authorization", "Bearer "+a.Key)
			req.Header.Set("Idempotency-Key", "racing-key-1")
			res, err := srv.Client().Do(req)
			if err != nil {
				answers <- answer{}
				return
			}
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			answers <- answer{res.StatusCode, res.Header.Get("Idempotent-Replayed"), string(out)}
		}()
	}
	ran, created := 0, ""
	for range n {
		got := <-answers
		switch {
		case got.status == http.StatusCreated && got.replayed == "false":
			ran++
			created = got.body
		case got.status == http.StatusCreated, got.status == http.StatusConflict:
		default:
			t.Errorf("answer %d %s", got.status, got.body)
		}
	}
	if ran != 1 {
		t.Fatalf("%d uploads ran, want 1", ran)
	}
	retry := env.Upload("/v2/risks/"+riskID+"/attachments", a.Key, keyed("racing-key-1"), body, ct)
	retry.T = t
	if retry.Expect(http.StatusCreated).Body.String() != created {
		t.Errorf("retry %s, want the replay of %s", retry.Body, created)
	}
	if l := len(list(t, env, riskID, a.Key)); l != 1 {
		t.Errorf("%d attachments, want 1", l)
	}
	if l := len(stored(t, env)); l != 1 {
		t.Errorf("%d files stored, want 1", l)
	}
}
