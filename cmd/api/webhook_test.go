package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/dbtest"
)

// TestWebhookCreate: api webhook create prints the contract's JSON line with a fresh
// signing secret; bad or missing input is a usage error (exit 2).
func TestWebhookCreate(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": dbtest.URL(t), "UPLOAD_DIR": t.TempDir()}
	cli := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, func(k string) string { return env[k] }, streams{out: &out, err: &errOut})
		return out.String(), errOut.String(), err
	}
	out, _, err := cli("tenant", "create", "--name", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	var tenant struct{ ID string }
	json.Unmarshal([]byte(out), &tenant)

	out, errOut, err := cli("webhook", "create", "--tenant", tenant.ID, "--source", "scanner")
	if err != nil {
		t.Fatalf("webhook create: %v; stderr %s", err, errOut)
	}
	var got map[string]string
	if strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("stdout %q is not one JSON line", out)
	}
	if len(got) != 4 || !regexp.MustCompile(`^whk_[0-9a-f]{32}$`).MatchString(got["id"]) ||
		got["tenantId"] != tenant.ID || got["source"] != "scanner" ||
		!regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`).MatchString(got["secret"]) {
		t.Errorf("printed %v", got)
	}

	for name, args := range map[string][]string{
		"source taken":   {"webhook", "create", "--tenant", tenant.ID, "--source", "scanner"},
		"unknown tenant": {"webhook", "create", "--tenant", "ten_0193b2c4d5e6f708192a3b4c5d6e7f80", "--source", "other"},
		"bad name":       {"webhook", "create", "--tenant", tenant.ID, "--source", "a/b"},
		"no source":      {"webhook", "create", "--tenant", tenant.ID},
		"no tenant":      {"webhook", "create", "--source", "x"},
	} {
		out, _, err := cli(args...)
		var ue usageError
		if !errors.As(err, &ue) || out != "" {
			t.Errorf("%s: err %v (want a usage error), stdout %q", name, err, out)
		}
	}
}
