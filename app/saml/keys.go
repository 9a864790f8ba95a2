package saml

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/idenplane/idenplane/store"
)

// A realm signs SAML messages with an RSA key of its own, whatever its
// OIDC keys are (ES256 and EdDSA are beyond most service providers), and
// publishes it as a self-signed certificate in its metadata. The key
// rotates on the realm's OIDC schedule: a next key is published for
// keyPublishGrace before it signs, so service providers that refresh the
// metadata daily have it; the key it replaces stays published for
// retiredKeyLifetime, for the messages in flight.

const (
	// keyBits: Keycloak's default, as the OIDC RSA keys.
	keyBits = 2048
	// certLifetime is the self-signed certificate's validity. saml2int
	// trusts a key by its presence in the metadata, not by the dates of its
	// certificate, and most service providers ignore them; the key rotates
	// long before.
	certLifetime       = 10 * 365 * 24 * time.Hour
	keyPublishGrace    = 24 * time.Hour
	retiredKeyLifetime = time.Hour
	defaultRotation    = 90
)

// signingKey is a parsed SAML key, with its certificate as KeyInfo
// carries it.
type signingKey struct {
	id         string
	key        *rsa.PrivateKey
	certBase64 string
}

// generateKey makes an RSA key and its self-signed certificate for realm,
// with status next, not yet stored.
func generateKey(realm *store.Realm, entityID string, now time.Time) (*store.SAMLKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, keyBits)
	if err != nil {
		return nil, fmt.Errorf("generate SAML key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: realm.Name, OrganizationalUnit: []string{entityID}},
		NotBefore:             now.Add(-time.Hour).UTC(),
		NotAfter:              now.Add(certLifetime).UTC(),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return nil, fmt.Errorf("self-sign SAML certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode SAML key: %w", err)
	}
	sum := sha256.Sum256(der)
	return &store.SAMLKey{ID: hex.EncodeToString(sum[:]), RealmID: realm.ID, PrivateKey: pkcs8, Certificate: der,
		Status: store.KeyNext, CreatedAt: now.UnixMilli()}, nil
}

func findKey(keys []*store.SAMLKey, status string) *store.SAMLKey {
	for _, k := range keys {
		if k.Status == status {
			return k
		}
	}
	return nil
}

// publishedKeys returns the certificates a realm publishes, making the
// realm's first key when it has none.
func (s *Service) publishedKeys(ctx context.Context, realm *store.Realm) ([]*store.SAMLKey, error) {
	keys, err := s.deps.Store.PublishedSAMLKeys(ctx, realm.ID, s.deps.Now())
	if err != nil || findKey(keys, store.KeyActive) != nil {
		return keys, err
	}
	if err := s.ensureActiveKey(ctx, realm); err != nil {
		return nil, err
	}
	return s.deps.Store.PublishedSAMLKeys(ctx, realm.ID, s.deps.Now())
}

// ensureActiveKey gives a realm without an active SAML key one, at once:
// nothing was signed before, so no service provider waits for it.
func (s *Service) ensureActiveKey(ctx context.Context, realm *store.Realm) error {
	now := s.deps.Now()
	k, err := generateKey(realm, s.entityID(realm), now)
	if err != nil {
		return err
	}
	k.Status, k.ActivatedAt = store.KeyActive, now.UnixMilli()
	err = s.deps.Store.CreateSAMLKey(ctx, k)
	if errors.Is(err, store.ErrConflict) {
		return nil // another request made it first
	}
	return err
}

// signingKey returns the key the realm signs with now: the cached one
// while it is current (keyCache.get), else the active key read again,
// parsed only when it is another key.
func (s *Service) signingKey(ctx context.Context, realm *store.Realm) (*signingKey, error) {
	gen, now := s.deps.Store.Generation(), s.deps.Now()
	cached, current := s.keys.get(realm.ID, gen, now)
	if current {
		return cached, nil
	}
	keys, err := s.publishedKeys(ctx, realm)
	if err != nil {
		return nil, err
	}
	active := findKey(keys, store.KeyActive)
	if active == nil {
		return nil, fmt.Errorf("realm %s has no active SAML key", realm.Name)
	}
	k := cached
	if k == nil || k.id != active.ID {
		if k, err = s.parseKey(ctx, realm, active); err != nil {
			return nil, err
		}
	}
	s.keys.put(realm.ID, gen, now, k)
	return k, nil
}

func (s *Service) parseKey(ctx context.Context, realm *store.Realm, k *store.SAMLKey) (*signingKey, error) {
	der, err := s.deps.Store.SAMLKeyPrivate(ctx, realm.ID, k.ID)
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse SAML key %s: %w", k.ID, err)
	}
	priv, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("SAML key %s is a %T, not RSA", k.ID, parsed)
	}
	cert, err := x509.ParseCertificate(k.Certificate)
	if err != nil {
		return nil, fmt.Errorf("parse SAML certificate %s: %w", k.ID, err)
	}
	return &signingKey{id: k.ID, key: priv, certBase64: base64.StdEncoding.EncodeToString(cert.Raw)}, nil
}

// RotateDueKeys is the periodic upkeep of the SAML identity provider: a
// next key is published keyPublishGrace before the active one is as old
// as the realm's rotation period, activated once it has been published
// that long, and retired keys are deleted once out of their publication;
// expired request IDs, waiting sign-ins and logouts are deleted.
func (s *Service) RotateDueKeys(ctx context.Context) {
	realms, err := s.deps.Store.ListRealms(ctx)
	if err != nil {
		s.logJobError(ctx, "listing realms for SAML key rotation failed", err)
		return
	}
	for _, realm := range realms {
		if err := s.rotateIfDue(ctx, realm); err != nil {
			s.logJobError(ctx, "SAML key rotation failed", err, "realm", realm.Name)
		}
	}
	if _, err := s.deps.Store.DeleteExpiredSAMLKeys(ctx, s.deps.Now()); err != nil {
		s.logJobError(ctx, "deleting expired SAML keys failed", err)
	}
	s.keys.clear() // read again on use: the keys of deleted realms go
	if _, err := s.deps.Store.DeleteExpiredSAMLRows(ctx, s.deps.Now()); err != nil {
		s.logJobError(ctx, "deleting expired SAML request IDs, sign-ins and logouts failed", err)
	}
}

func (s *Service) rotateIfDue(ctx context.Context, realm *store.Realm) error {
	keys, err := s.deps.Store.ListSAMLKeys(ctx, realm.ID)
	if err != nil {
		return err
	}
	active, next := findKey(keys, store.KeyActive), findKey(keys, store.KeyNext)
	now := s.deps.Now()
	switch {
	case active == nil:
		return nil // made on first use
	case next != nil:
		if now.Sub(time.UnixMilli(next.CreatedAt)) < keyPublishGrace {
			return nil
		}
		return s.deps.Store.ActivateSAMLKey(ctx, realm.ID, next.ID, now, now.Add(retiredKeyLifetime))
	}
	days, err := s.deps.RotationDays(ctx, realm.ID)
	if err != nil || days == 0 {
		return err
	}
	due := time.UnixMilli(active.ActivatedAt).Add(time.Duration(days)*24*time.Hour - keyPublishGrace)
	if now.Before(due) {
		return nil
	}
	k, err := generateKey(realm, s.entityID(realm), now)
	if err != nil {
		return err
	}
	return s.deps.Store.CreateSAMLKey(ctx, k)
}

func (s *Service) logJobError(ctx context.Context, msg string, err error, args ...any) {
	if ctx.Err() == nil {
		s.deps.Log.Error(msg, append(args, "err", err)...)
	}
}
