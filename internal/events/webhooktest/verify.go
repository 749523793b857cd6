package webhooktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// VerifyWithNode checks every delivery's signature against secret with the Standard
// Webhooks reference implementation for Node.js (npm standardwebhooks, vendored in
// testdata/node), failing t on the first that does not verify. Deliveries must be
// less than 5 minutes old (the library's tolerance). It skips t when node is not
// installed.
func VerifyWithNode(t testing.TB, secret string, ds []Delivery) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: cannot verify with the independent implementation")
	}
	if len(ds) == 0 {
		t.Fatal("VerifyWithNode: no deliveries to verify")
	}
	if err := NodeVerify(secret, ds); err != nil {
		t.Fatal(err)
	}
}

// NodeVerify is VerifyWithNode returning the refusal as an error.
func NodeVerify(secret string, ds []Delivery) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return err
	}
	_, file, _, _ := runtime.Caller(0)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, d := range ds {
		h := map[string]string{}
		for k := range d.Header {
			h[strings.ToLower(k)] = d.Header.Get(k)
		}
		enc.Encode(map[string]any{"secret": secret, "headers": h, "body": base64.StdEncoding.EncodeToString(d.Body)})
	}
	cmd := exec.Command(node, "verify.js")
	cmd.Dir = filepath.Join(filepath.Dir(file), "testdata", "node")
	cmd.Stdin = &in
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("the Standard Webhooks reference library refused a signature: %v\n%s", err, out)
	}
	if want := "verified " + strconv.Itoa(len(ds)); !strings.Contains(string(out), want) {
		return fmt.Errorf("node verifier: got %q, want %q", out, want)
	}
	return nil
}
