package webhookstore

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/riskapi/riskapi/internal/secretkey"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// sealedPrefix marks a secret column sealed by secretkey.Sealer: 83 characters, it
// fits the column's 100. The source ID binds a sealed value to its row.
const sealedPrefix = "v1."

// sealer seals and opens source signing secrets: the 32 bytes after "whsec_".
type sealer struct{ s *secretkey.Sealer }

func newSealer(key []byte) (sealer, error) {
	s, err := secretkey.NewSealer(key)
	return sealer{s: s}, err
}

// seal returns the column value of secret ("whsec_" + 43 base64url characters).
func (s sealer) seal(sourceID, secret string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, webhooks.SecretPrefix))
	if err != nil || !strings.HasPrefix(secret, webhooks.SecretPrefix) {
		return "", errors.New("webhook secret is not whsec_ and base64url")
	}
	return s.s.Seal(sourceID, raw)
}

// open returns the secret of a column value. A value that is not sealed was written
// before secrets were sealed (SealLegacy rewrites those) and is the secret itself.
func (s sealer) open(sourceID, stored string) (string, error) {
	if !secretkey.Sealed(stored) {
		return stored, nil
	}
	raw, err := s.s.Open(sourceID, stored)
	if err != nil {
		return "", err
	}
	return webhooks.SecretPrefix + base64.RawURLEncoding.EncodeToString(raw), nil
}
