package adminkeys

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// The form of a key: ipk_<id>_<secret>, the ID 16 hex digits (64 random
// bits, not secret: lists and events show it), the secret 256 random bits
// in unpadded base64url (43 characters).
const (
	Mark         = "ipk_"
	idBytes      = 8
	secretBytes  = 32
	secretLength = 43 // base64.RawURLEncoding.EncodedLen(secretBytes)
	// shownChars of the secret are in a key's displayed prefix, to tell
	// its secrets apart after a rotation.
	shownChars = 4
)

// newID makes a key's ID.
func newID() string {
	b := make([]byte, idBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// newSecret makes a key of the key id: the key, its displayed prefix, and
// the SHA-256 of the key, which is all that is stored.
func newSecret(id string) (key, prefix string, hash []byte) {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b)
	secret := base64.RawURLEncoding.EncodeToString(b)
	key = Mark + id + "_" + secret
	h := sha256.Sum256([]byte(key))
	return key, Mark + id + "_" + secret[:shownChars], h[:]
}

// ParseKey is the ID of what has the form of a key, or "" for anything
// else: another credential, or outside input that only looks like one.
func ParseKey(s string) string {
	rest, ok := strings.CutPrefix(s, Mark)
	if !ok || len(rest) != 2*idBytes+1+secretLength {
		return ""
	}
	id, secret := rest[:2*idBytes], rest[2*idBytes+1:]
	if rest[2*idBytes] != '_' || !isLowerHex(id) {
		return ""
	}
	if _, err := base64.RawURLEncoding.Strict().DecodeString(secret); err != nil {
		return ""
	}
	return id
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
