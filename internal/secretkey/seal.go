package secretkey

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// sealedPrefix marks a value Seal wrote (format version 1): "v1." + base64(nonce ‖
// AES-256-GCM ciphertext ‖ tag). 32 secret bytes seal to 83 characters.
const sealedPrefix = "v1."

// Sealer seals secrets that must be recovered (webhook signing secrets) under a key
// derived from SECRET_KEY (SealWebhookSecrets), binding each to the ID of its row,
// so that a sealed value moved to another row does not open.
type Sealer struct{ aead cipher.AEAD }

// NewSealer returns a Sealer under key (32 bytes: AES-256). Errors: another length.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, errors.New("secretkey: a sealing key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Sealed reports whether stored is a value Seal wrote.
func Sealed(stored string) bool { return strings.HasPrefix(stored, sealedPrefix) }

// Seal returns raw sealed for the row id. Errors: no randomness.
func (s *Sealer) Seal(id string, raw []byte) (string, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(raw)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, raw, []byte(id))), nil
}

// Open returns what Seal sealed for the row id. Errors: not a sealed value, or one
// that does not open with this key for this id.
func (s *Sealer) Open(id, stored string) ([]byte, error) {
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(stored, sealedPrefix))
	n := s.aead.NonceSize()
	if !Sealed(stored) || err != nil || len(b) < n {
		return nil, fmt.Errorf("%s: sealed secret is malformed", id)
	}
	raw, err := s.aead.Open(nil, b[:n], b[n:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("%s: sealed secret does not open with this SECRET_KEY", id)
	}
	return raw, nil
}
