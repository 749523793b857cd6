package server_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/apitest"
	"github.com/riskapi/riskapi/internal/config"
)

// TestShutdownClosesWhatOutlivesTheGrace: an upload that keeps trickling in above the
// minimum rate is no stall, yet shutdown must not wait on it past the grace: Serve
// returns nil within ShutdownGrace, and the upload's spooled file is gone.
// (internal/e2e's TestShutdownWithStalledUpload covers a stall with a real SIGTERM.)
func TestShutdownClosesWhatOutlivesTheGrace(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) {
		c.HTTP.ShutdownGrace = 1200 * time.Millisecond
		c.HTTP.UploadMinRate, c.HTTP.UploadRateWindow = 1000, 500*time.Millisecond
	})
	a := env.Tenant("Acme")
	var risk struct{ ID string }
	env.Do(apitest.Request{Method: "POST", Path: "/v2/risks", Bearer: a.Key, JSON: map[string]any{"title": "r"}}).Expect(201).Decode(&risk)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- env.App.Serve(ctx, func(a net.Addr) { addrc <- a }) }()
	conn, err := net.Dial("tcp", (<-addrc).String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v2/risks/%s/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n"+
		"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n", risk.ID, a.Key, 1<<30)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // 2 KB every 100 ms: well above the minimum rate, for ever
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := conn.Write([]byte(strings.Repeat("x", 2000))); err != nil {
				return
			}
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); !hasSpooled(env); {
		if time.Now().After(deadline) {
			t.Fatal("the upload never started spooling")
		}
		time.Sleep(10 * time.Millisecond)
	}

	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after the grace: %v, want nil (exit 0)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still waiting on a trickling upload 5 s after shutdown began")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("shutdown took %s, want about the 1.2 s grace", took)
	}
	if hasSpooled(env) {
		t.Errorf("spooled files left behind: %v", env.StoredFiles())
	}
}

func hasSpooled(env *apitest.Env) bool {
	for _, f := range env.StoredFiles() {
		if strings.HasPrefix(f, "tmp/") {
			return true
		}
	}
	return false
}
