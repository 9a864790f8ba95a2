package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/idenplane/idenplane/store"
)

// How a non-human identity authenticates as its backing client: with a
// client secret or API key of its own (CheckNHISecret), or with a client
// assertion signed by one of its keys (CheckClientAssertion). Either way,
// only an active identity, with a credential that is active now.

// ErrNHIInactive: the identity is suspended or decommissioned, and gets
// no tokens.
var ErrNHIInactive = errors.New("the identity is not active")

// ErrBadAssertion is every refused client assertion; Reason says why, for
// the log and the login event, never for the caller.
type ErrBadAssertion struct{ Reason string }

func (e *ErrBadAssertion) Error() string { return "client assertion refused: " + e.Reason }

// AssertionAlgorithms are the JWS algorithms a client assertion may be
// signed with: asymmetric ones only, the identity holding a public key.
var AssertionAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384,
	jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

const (
	// lastUsedPrecision: a use is recorded when the one stored is older,
	// so that a busy identity does not put a write behind every token.
	lastUsedPrecision = time.Minute
	// maxAssertionLifetime bounds how far ahead an assertion's exp may
	// be: its jti is remembered until then.
	maxAssertionLifetime = 10 * time.Minute
	assertionClockSkew   = 30 * time.Second
)

// CheckNHISecret authenticates identity n by secret: one of its active
// client secrets, or an active API key of its own. An identity's backing
// client has no secret of its own, so nothing else authenticates it.
func (c *Core) CheckNHISecret(ctx context.Context, n *store.NHI, secret string) (*store.NHICredential, error) {
	if n.State != NHIActive {
		return nil, ErrNHIInactive
	}
	now := c.now().UnixMilli()
	var match *store.NHICredential
	if prefix := APIKeyPrefix(secret); prefix != "" {
		cred, err := c.store.GetNHICredentialByPrefix(ctx, n.RealmID, prefix)
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrBadCredentials
		} else if err != nil {
			return nil, err
		}
		if cred.NHIID == n.ID && cred.Type == CredAPIKey && SecretMatches(cred.SecretHash, secret) {
			match = cred
		}
	} else {
		creds, err := c.store.ListNHICredentials(ctx, n.ID, CredClientSecret)
		if err != nil {
			return nil, err
		}
		// Every candidate is compared, so the time taken does not say which
		// one matched.
		for _, cred := range creds {
			if SecretMatches(cred.SecretHash, secret) && match == nil {
				match = cred
			}
		}
	}
	if match == nil || CredentialState(match, now) != CredActive {
		return nil, ErrBadCredentials
	}
	return match, nil
}

// RecordNHIRefusal records a refused authentication as n, in one
// transaction: the audit record with its reason, and the day's count.
func (c *Core) RecordNHIRefusal(ctx context.Context, n *store.NHI, actor Actor, reason string) error {
	return c.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.AddNHIUsage(ctx, n.ID, store.NHIUsage{Day: NHIDay(c.now()), Failures: 1}); err != nil {
			return err
		}
		return c.AuditNHI(ctx, tx, n, "", AuditCredentialRefused, actor, reason)
	})
}

// AssertionSubject is the client an assertion says it comes from (its
// sub, which must equal its iss), read before its signature is checked
// so that the client's keys can be found: nothing else of it may be
// trusted until CheckClientAssertion passes. An assertion refused here
// still answers the sub it names, when one can be read, so that the
// refusal is recorded against that client's identity.
func AssertionSubject(assertion string) (*jwt.JSONWebToken, string, error) {
	tok, err := jwt.ParseSigned(assertion, AssertionAlgorithms)
	if err != nil {
		alg, sub := unverifiedAlgAndSubject(assertion)
		return nil, sub, &ErrBadAssertion{Reason: fmt.Sprintf("not a signed JWT of an accepted algorithm (alg %q)", alg)}
	}
	var claims jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&claims); err != nil {
		return nil, "", &ErrBadAssertion{Reason: "unreadable claims"}
	}
	if claims.Subject == "" || claims.Issuer != claims.Subject {
		return nil, claims.Subject, &ErrBadAssertion{Reason: "iss and sub must both be the client_id"}
	}
	return tok, claims.Subject, nil
}

// unverifiedAlgAndSubject reads the header's alg (cut short: it goes into
// the audit record) and the payload's sub of a compact JWS that go-jose
// refused, each "" when it cannot be read.
func unverifiedAlgAndSubject(assertion string) (alg, sub string) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return "", ""
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err == nil && json.Unmarshal(b, &hdr) == nil {
		alg = hdr.Alg
		if len(alg) > 16 {
			alg = alg[:16]
		}
	}
	var claims struct {
		Subject string `json:"sub"`
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil && json.Unmarshal(b, &claims) == nil {
		sub = claims.Subject
	}
	return alg, sub
}

// CheckClientAssertion authenticates identity n by a client assertion
// (RFC 7523 §3, OpenID Connect Core §9 private_key_jwt): signed by one of
// its active public keys (the header's kid picks it, when given) with an
// algorithm of that key; iss and sub its client; aud naming one of
// audiences (the token endpoint or the issuer); exp ahead, at most ten
// minutes; nbf and iat not ahead; a jti never used before.
func (c *Core) CheckClientAssertion(ctx context.Context, n *store.NHI, tok *jwt.JSONWebToken, audiences []string) (*store.NHICredential, error) {
	if n.State != NHIActive {
		return nil, ErrNHIInactive
	}
	if len(tok.Headers) != 1 {
		return nil, &ErrBadAssertion{Reason: "one signature expected"}
	}
	hdr := tok.Headers[0]
	now := c.now()
	keys, err := c.store.ListNHICredentials(ctx, n.ID, CredPublicKey, CredCertificate)
	if err != nil {
		return nil, err
	}
	var cred *store.NHICredential
	var claims jwt.Claims
	for _, k := range keys {
		if CredentialState(k, now.UnixMilli()) != CredActive || (hdr.KeyID != "" && hdr.KeyID != k.KeyID) {
			continue
		}
		var jwk jose.JSONWebKey
		if err := json.Unmarshal([]byte(k.PublicKey), &jwk); err != nil {
			return nil, fmt.Errorf("stored key %s: %w", k.ID, err)
		}
		if !slices.Contains(KeyAlgorithms(jwk.Key), jose.SignatureAlgorithm(hdr.Algorithm)) {
			continue
		}
		if tok.Claims(jwk.Key, &claims) == nil {
			cred = k
			break
		}
	}
	if cred == nil {
		return nil, &ErrBadAssertion{Reason: "no active key of the identity verifies its signature"}
	}
	switch {
	case claims.Issuer != n.Name || claims.Subject != n.Name:
		return nil, &ErrBadAssertion{Reason: "iss and sub must both be the client_id"}
	case !slices.ContainsFunc(audiences, func(a string) bool { return claims.Audience.Contains(a) }):
		return nil, &ErrBadAssertion{Reason: "aud names neither the token endpoint nor the issuer"}
	case claims.Expiry == nil:
		return nil, &ErrBadAssertion{Reason: "exp is required"}
	case claims.ID == "":
		return nil, &ErrBadAssertion{Reason: "jti is required"}
	case claims.Expiry.Time().After(now.Add(maxAssertionLifetime)):
		return nil, &ErrBadAssertion{Reason: "exp is more than ten minutes ahead"}
	}
	// exp passed, nbf or iat ahead (with a little skew): go-jose checks.
	if err := claims.ValidateWithLeeway(jwt.Expected{Time: now}, assertionClockSkew); err != nil {
		return nil, &ErrBadAssertion{Reason: err.Error()}
	}
	jti := sha256.Sum256([]byte(claims.ID))
	err = c.store.UseAssertionID(ctx, n.ClientID, jti[:], claims.Expiry.Time().Add(assertionClockSkew).UnixMilli(), now.UnixMilli())
	if errors.Is(err, store.ErrConflict) {
		return nil, &ErrBadAssertion{Reason: "jti already used"}
	} else if err != nil {
		return nil, err
	}
	return cred, nil
}

// NHIDay is the day of t as the usage counts keep it: days since
// 1970-01-01, UTC.
func NHIDay(t time.Time) int64 { return t.Unix() / 86400 }

// CheckAPIKey finds the active identity whose active API key key is, for
// a resource server that asks about it as an opaque bearer token. Any
// other key is ErrBadCredentials; a key of an identity that is not active,
// ErrNHIInactive.
func (c *Core) CheckAPIKey(ctx context.Context, realmID, key string) (*store.NHI, *store.NHICredential, error) {
	prefix := APIKeyPrefix(key)
	if prefix == "" {
		return nil, nil, ErrBadCredentials
	}
	cred, err := c.store.GetNHICredentialByPrefix(ctx, realmID, prefix)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, ErrBadCredentials
	} else if err != nil {
		return nil, nil, err
	}
	if cred.Type != CredAPIKey || !SecretMatches(cred.SecretHash, key) || CredentialState(cred, c.now().UnixMilli()) != CredActive {
		return nil, nil, ErrBadCredentials
	}
	n, err := c.store.GetNHI(ctx, realmID, cred.NHIID)
	if err != nil {
		return nil, nil, err
	}
	if n.State != NHIActive {
		return n, nil, ErrNHIInactive
	}
	return n, cred, nil
}
