package identity

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The credentials of non-human identities: what each type holds, how a
// secret and an API key are made and checked, which public keys are
// accepted, and what state a credential is in at a given time.

// The types of credential.
const (
	CredClientSecret = "client_secret" // a secret sent as client_secret
	CredAPIKey       = "api_key"       // idp_<prefix>_<secret>: a client secret, and a bearer token
	CredPublicKey    = "public_key"    // a key whose private half signs client assertions (RFC 7523)
	CredCertificate  = "certificate"   // an X.509 certificate, of the realm's CA or self-signed
)

// CredentialTypes are the types a caller may issue through the
// credentials endpoint.
var CredentialTypes = []string{CredClientSecret, CredAPIKey, CredPublicKey}

// The states of a credential, which follow from its times.
const (
	CredActive  = "active"
	CredExpired = "expired"
	CredRevoked = "revoked"
)

// MaxWorkingCredentials bounds the credentials of an identity that still
// work: enough for several consumers and an overlap of rotations, few
// enough that a forgotten credential is noticed.
const MaxWorkingCredentials = 10

const (
	apiKeyMark        = "idp_"
	apiKeyPrefixBytes = 6
	// minRSABits refuses the keys NIST retired (SP 800-131A).
	minRSABits = 2048
	maxKeyText = 16 << 10
)

// CredentialState is the state of c at now (Unix milliseconds): revoked
// from its revocation time (which a rotation's grace period may put in
// the future), expired from its expiry.
func CredentialState(c *store.NHICredential, now int64) string {
	switch {
	case c.RevokedAt != 0 && c.RevokedAt <= now:
		return CredRevoked
	case c.ExpiresAt != 0 && c.ExpiresAt <= now:
		return CredExpired
	}
	return CredActive
}

// NewAPIKey makes an API key, idp_<prefix>_<secret>: the prefix (12 hex
// digits) finds it and is shown in lists; the secret is 256 random bits.
// Only the SHA-256 of the whole key is stored.
func NewAPIKey() (key, prefix string, hash []byte) {
	p := make([]byte, apiKeyPrefixBytes)
	_, _ = rand.Read(p)
	prefix = hex.EncodeToString(p)
	secret, _ := NewClientSecret()
	key = apiKeyMark + prefix + "_" + secret
	h := sha256.Sum256([]byte(key))
	return key, prefix, h[:]
}

// APIKeyPrefix is the prefix of what looks like an API key, or "".
func APIKeyPrefix(s string) string {
	rest, ok := strings.CutPrefix(s, apiKeyMark)
	if !ok {
		return ""
	}
	prefix, secret, ok := strings.Cut(rest, "_")
	if !ok || len(prefix) != 2*apiKeyPrefixBytes || secret == "" {
		return ""
	}
	if _, err := hex.DecodeString(prefix); err != nil {
		return ""
	}
	return prefix
}

// SecretMatches says whether secret hashes to hash, in constant time.
func SecretMatches(hash []byte, secret string) bool {
	if len(hash) == 0 {
		return false
	}
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], hash) == 1
}

// ParsePublicKey reads a public key an identity will sign client
// assertions with: a JWK (a JSON object) or a PEM block (a JSON string
// holding a PUBLIC KEY, or a CERTIFICATE whose key is taken). RSA of at
// least 2048 bits, EC on P-256, P-384 or P-521, and Ed25519 are accepted;
// a private key is refused, so that it is never stored. The key's kid is
// the one the JWK names, else its RFC 7638 thumbprint.
func ParsePublicKey(raw json.RawMessage) (jose.JSONWebKey, error) {
	var none jose.JSONWebKey
	if len(raw) > maxKeyText {
		return none, apperr.Field("publicKey", "must be at most %d bytes", maxKeyText)
	}
	var key jose.JSONWebKey
	var text string
	switch {
	case json.Unmarshal(raw, &text) == nil:
		k, err := parsePEMPublicKey(text)
		if err != nil {
			return none, err
		}
		key = jose.JSONWebKey{Key: k}
	default:
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return none, apperr.Field("publicKey", "must be a JWK (a JSON object) or a PEM public key (a string)")
		}
		if _, private := fields["d"]; private {
			return none, apperr.Field("publicKey", "is a private key: send only its public part")
		}
		if err := key.UnmarshalJSON(raw); err != nil {
			return none, apperr.Field("publicKey", "is not a valid JWK")
		}
	}
	if !key.IsPublic() {
		return none, apperr.Field("publicKey", "is a private key: send only its public part")
	}
	if err := checkKeyStrength("publicKey", key.Key); err != nil {
		return none, err
	}
	if key.KeyID == "" {
		tp, err := key.Thumbprint(crypto.SHA256)
		if err != nil {
			return none, apperr.Field("publicKey", "is not a usable key")
		}
		key.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	}
	if len(key.KeyID) > 255 {
		return none, apperr.Field("publicKey", "kid must be at most 255 bytes")
	}
	key.Certificates, key.CertificatesURL, key.CertificateThumbprintSHA1, key.CertificateThumbprintSHA256 = nil, nil, nil, nil
	key.Use = "sig"
	return key, nil
}

func parsePEMPublicKey(text string) (any, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, apperr.Field("publicKey", "is neither a JWK nor a PEM block")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, apperr.Field("publicKey", "is not a readable PKIX public key: %v", err)
		}
		return k, nil
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, apperr.Field("publicKey", "is not a readable certificate: %v", err)
		}
		return c.PublicKey, nil
	}
	return nil, apperr.Field("publicKey", "is a PEM %q block: send a PUBLIC KEY or a CERTIFICATE, never a private key", block.Type)
}

func checkKeyStrength(field string, k any) error {
	switch k := k.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return apperr.Field(field, "an RSA key must have at least %d bits", minRSABits)
		}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
		default:
			return apperr.Field(field, "an EC key must be on P-256, P-384 or P-521")
		}
	case ed25519.PublicKey:
	default:
		return apperr.Field(field, "must be an RSA, EC or Ed25519 key")
	}
	return nil
}

// KeyAlgorithms are the JWS algorithms an assertion signed by k may use.
func KeyAlgorithms(k any) []jose.SignatureAlgorithm {
	switch k := k.(type) {
	case *rsa.PublicKey:
		return []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return []jose.SignatureAlgorithm{jose.ES256}
		case elliptic.P384():
			return []jose.SignatureAlgorithm{jose.ES384}
		case elliptic.P521():
			return []jose.SignatureAlgorithm{jose.ES512}
		}
	case ed25519.PublicKey:
		return []jose.SignatureAlgorithm{jose.EdDSA}
	}
	return nil
}
