package webhookstore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/riskapi/riskapi/internal/webhooks"
)

// sealedPrefix marks a secret column sealed by this package (format version 1):
// "v1." + base64(nonce ‖ AES-256-GCM ciphertext ‖ tag) of the secret's 32 random
// bytes, with the source ID as additional data so a sealed value cannot be moved
// to another source. 83 characters: it fits the column's 100.
const sealedPrefix = "v1."

// sealer encrypts and decrypts signing secrets under the instance key.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (sealer, error) {
	if len(key) != 32 {
		return sealer{}, errors.New("webhook secret key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealer{}, err
	}
	aead, err := cipher.NewGCM(block)
	return sealer{aead: aead}, err
}

// seal returns the column value of secret ("whsec_" + 43 base64url characters).
func (s sealer) seal(sourceID, secret string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, webhooks.SecretPrefix))
	if err != nil || !strings.HasPrefix(secret, webhooks.SecretPrefix) {
		return "", errors.New("webhook secret is not whsec_ and base64url")
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(raw)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := s.aead.Seal(nonce, nonce, raw, []byte(sourceID))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

// open returns the secret of a column value. A value without sealedPrefix was
// written before secrets were sealed (SealLegacy rewrites those) and is the
// secret itself.
func (s sealer) open(sourceID, stored string) (string, error) {
	if !strings.HasPrefix(stored, sealedPrefix) {
		return stored, nil
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(stored, sealedPrefix))
	n := s.aead.NonceSize()
	if err != nil || len(b) < n {
		return "", fmt.Errorf("webhook source %s: sealed secret is malformed", sourceID)
	}
	raw, err := s.aead.Open(nil, b[:n], b[n:], []byte(sourceID))
	if err != nil {
		return "", fmt.Errorf("webhook source %s: sealed secret does not open with this instance key", sourceID)
	}
	return webhooks.SecretPrefix + base64.RawURLEncoding.EncodeToString(raw), nil
}
