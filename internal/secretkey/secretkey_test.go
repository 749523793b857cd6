package secretkey_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/riskapi/riskapi/internal/secretkey"
)

// TestKeyFile: unset, the key is created once in the data directory (mode 0600) and
// read back the same by the next process; each purpose gets its own key.
func TestKeyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	a, err := secretkey.Load("", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, secretkey.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	b, err := secretkey.Load("", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.For(secretkey.Fingerprint), b.For(secretkey.Fingerprint)) {
		t.Error("a second load of the key file derived another key")
	}
	if bytes.Equal(a.For(secretkey.Fingerprint), a.For(secretkey.SealWebhookSecrets)) {
		t.Error("two purposes share a key")
	}
	c, err := secretkey.Load("", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.For(secretkey.Fingerprint), c.For(secretkey.Fingerprint)) {
		t.Error("two data directories got the same key")
	}
}

// TestConfiguredKey: SECRET_KEY wins over any file and must be 32 bytes at least.
func TestConfiguredKey(t *testing.T) {
	if _, err := secretkey.Load("short", t.TempDir(), nil); err == nil {
		t.Error("a 5-byte SECRET_KEY was accepted")
	}
	dir := t.TempDir()
	k, err := secretkey.Load("0123456789abcdef0123456789abcdef", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, secretkey.FileName)); err == nil {
		t.Error("a key file was written although SECRET_KEY is set")
	}
	if len(k.For(secretkey.SignSessions)) != 32 {
		t.Error("derived key is not 32 bytes")
	}
}

func TestDir(t *testing.T) {
	for in, want := range map[string]string{
		"sqlite://data/riskapi.db":            "data",
		"sqlite:///var/lib/riskapi/db.sqlite": "/var/lib/riskapi",
		"postgres://u@h/db":                   "data",
	} {
		if got := secretkey.Dir(in); got != want {
			t.Errorf("Dir(%q) = %q, want %q", in, got, want)
		}
	}
}
