// Package secretkey is riskapi's SECRET_KEY: the one key, never stored in the
// database, from which the keys that seal stored secrets, key the idempotency
// fingerprints and (without JWT_SECRET) sign sessions are derived, so that a copy of
// the database alone unseals, forges and tests guesses of nothing
// (docs/security.md). Unset, it is a random key kept in a file of the data
// directory, so that `api serve --demo` needs no configuration.
package secretkey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// FileName is the key file in the data directory (Dir).
const FileName = "secret.key"

// MinLength is the shortest SECRET_KEY accepted, in bytes.
const MinLength = 32

// Purposes of the derived keys (For): each use has its own key, so that nothing one
// use reveals or accepts serves another.
const (
	// Fingerprint keys the idempotency fingerprints (HMAC-SHA256).
	Fingerprint = "idempotency-fingerprint"
	// SealWebhookSecrets seals inbound source and outbound endpoint secrets.
	SealWebhookSecrets = "webhook-secret-seal"
	// SignSessions signs session tokens when JWT_SECRET is not set.
	SignSessions = "session-signing"
)

// Key is a loaded SECRET_KEY. Its zero value is not usable.
type Key struct{ raw []byte }

// Load returns the key configured (SECRET_KEY, at least MinLength bytes) when it is
// set. Otherwise it returns the key kept in dir/FileName, creating dir and the file
// (64 hex digits, mode 0600) on first use and logging a warning: several instances
// must share one key, and a file is per machine. Errors: a configured key too short,
// a key file that cannot be read, created or parsed.
func Load(configured, dir string, log *slog.Logger) (Key, error) {
	if configured != "" {
		if len(configured) < MinLength {
			return Key{}, fmt.Errorf("SECRET_KEY must be at least %d bytes", MinLength)
		}
		return Key{raw: []byte(configured)}, nil
	}
	path := filepath.Join(dir, FileName)
	raw, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		raw, err = create(path)
		if err == nil && log != nil {
			log.Warn("SECRET_KEY is not set: generated a random one in " + path +
				"; set SECRET_KEY in production, the same on every instance")
		}
	}
	if err != nil {
		return Key{}, err
	}
	return Key{raw: raw}, nil
}

func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(raw) < MinLength {
		return nil, fmt.Errorf("%s: want %d hex digits", path, 2*MinLength)
	}
	return raw, nil
}

// create writes a new random key to path, unless another process just did (then it
// reads theirs).
func create(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("secret key directory: %w", err)
	}
	raw := make([]byte, MinLength)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(raw) + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	return raw, nil
}

// For returns the 32-byte key for purpose (one of the constants above):
// HMAC-SHA256 of "riskapi/" + purpose under SECRET_KEY.
func (k Key) For(purpose string) []byte {
	if len(k.raw) == 0 {
		panic("secretkey: zero Key")
	}
	m := hmac.New(sha256.New, k.raw)
	m.Write([]byte("riskapi/" + purpose))
	return m.Sum(nil)
}

// Dir is the data directory of a DATABASE_URL: the SQLite file's directory, or
// "data" (in the working directory) for PostgreSQL.
func Dir(databaseURL string) string {
	if path, ok := strings.CutPrefix(databaseURL, "sqlite://"); ok {
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		return filepath.Dir(path)
	}
	return "data"
}
