package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthcheck: api healthcheck succeeds against a serving riskapi on the ADDR
// it is given (an unspecified host is asked on loopback), and fails when nothing
// listens there, or when the health endpoint answers anything but 200.
func TestHealthcheck(t *testing.T) {
	env := environment(t)
	a := openTestApp(t, env)
	srv := httptest.NewServer(a.Echo)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for _, args := range [][]string{{"--addr", ":" + port}, {"--addr", "127.0.0.1:" + port, "--ready"}} {
		if _, errOut, err := runCmd(t, env, append([]string{"healthcheck"}, args...)...); err != nil {
			t.Errorf("healthcheck %v against a serving riskapi: %v %s", args, err, errOut)
		}
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	_, downPort, _ := net.SplitHostPort(strings.TrimPrefix(down.URL, "http://"))
	down.Close() // nothing listens there any more
	if _, _, err := runCmd(t, env, "healthcheck", "--addr", "127.0.0.1:"+downPort); err == nil {
		t.Error("healthcheck succeeded with nothing listening")
	}
	unwell := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer unwell.Close()
	_, unwellPort, _ := net.SplitHostPort(strings.TrimPrefix(unwell.URL, "http://"))
	if _, _, err := runCmd(t, env, "healthcheck", "--addr", "127.0.0.1:"+unwellPort); err == nil {
		t.Error("healthcheck succeeded on a 503")
	}
}
