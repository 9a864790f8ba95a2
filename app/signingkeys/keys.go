package signingkeys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// A realm's keys move through three states: next (published in the key
// set, not signing), active (signing every token) and retired (published
// until the tokens it signed expire, then deleted). PublishGrace and
// retiredKeyLifetime say for how long.

const (
	// RSAKeyBits is the size of the RSA keys the server makes (and of the
	// load test's RS256 floor): Keycloak's default. 2048-bit RSA (112-bit strength) is
	// acceptable through 2030 per NIST SP 800-57 and signs about three
	// times faster than 3072; keys rotate every 90 days by default, so a
	// later move to 3072 takes effect within one rotation.
	RSAKeyBits = 2048
	// PublishGrace is how long a scheduled next key is published before
	// it signs, so verifiers that cache the key set on a timer have fetched
	// it by then. A day covers the common caches (minutes for most
	// libraries, 12 hours for Microsoft.IdentityModel's automatic refresh).
	PublishGrace = 24 * time.Hour
	// RetiredKeyMargin is added to the token lifetime a retired key stays
	// published for: it covers verifiers' clock-skew leeway and tokens
	// signed with a key fetched just before it was retired.
	RetiredKeyMargin = 10 * time.Minute
	// keyChangeAttempts bounds the retries of a key change that raced another.
	keyChangeAttempts = 3

	defaultKeyAlgorithm    = jose.RS256
	defaultKeyRotationDays = 90
	maxKeyRotationDays     = 3650
)

// algorithms are the signature algorithms a realm may sign with.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

// Key is the key a realm signs tokens with now.
type Key struct {
	ID        string // kid
	Algorithm jose.SignatureAlgorithm
	Key       crypto.Signer
	// headers are the encoded protected headers of its tokens by typ
	// (Sign): the same few for the key's life.
	headers sync.Map
}

// keyCache holds parsed private keys by kid: parsing an RSA key costs more
// than signing with it, and the token endpoint signs on every request.
type keyCache struct {
	mu   sync.RWMutex
	keys map[string]*Key
}

func newKeyCache() *keyCache { return &keyCache{keys: map[string]*Key{}} }

func (c *keyCache) get(kid string) *Key {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keys[kid]
}

func (c *keyCache) put(k *Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys[k.ID] = k
}

// retain drops every key but those named: a key no longer active signs
// nothing, and one of a deleted realm is gone.
func (c *keyCache) retain(kids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for kid := range c.keys {
		if !slices.Contains(kids, kid) {
			delete(c.keys, kid)
		}
	}
}

// KeyMaker makes the private key of a new signing key of alg.
type KeyMaker func(alg jose.SignatureAlgorithm) (crypto.Signer, error)

// NewPrivateKey makes a fresh private key of alg from crypto/rand: the
// server's KeyMaker unless its configuration names another.
func NewPrivateKey(alg jose.SignatureAlgorithm) (crypto.Signer, error) {
	switch alg {
	case jose.RS256:
		return rsa.GenerateKey(rand.Reader, RSAKeyBits)
	case jose.ES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	}
	return nil, fmt.Errorf("signing algorithm %s is not supported", alg)
}

// generateSigningKey makes a key pair for alg, not yet stored, with status
// next. Its kid is the RFC 7638 thumbprint of the public key: unique without
// coordination, and any verifier can recompute it.
func generateSigningKey(makeKey KeyMaker, realmID string, alg jose.SignatureAlgorithm, now time.Time) (*store.SigningKey, error) {
	priv, err := makeKey(alg)
	if err != nil {
		return nil, fmt.Errorf("generate %s key: %w", alg, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode %s key: %w", alg, err)
	}
	jwk := jose.JSONWebKey{Key: priv.Public(), Algorithm: string(alg), Use: "sig"}
	thumb, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("thumbprint %s key: %w", alg, err)
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
	pub, err := jwk.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode %s public key: %w", alg, err)
	}
	return &store.SigningKey{ID: jwk.KeyID, RealmID: realmID, Algorithm: string(alg), PrivateKey: der,
		PublicJWK: string(pub), Status: store.KeyNext, CreatedAt: now.UnixMilli()}, nil
}

func defaultSettings(realmID string) *store.KeySettings {
	return &store.KeySettings{RealmID: realmID, Algorithm: string(defaultKeyAlgorithm), RotationDays: defaultKeyRotationDays}
}

// RealmKeys are a new realm's rotation settings and first signing key.
// They are made before the transaction that creates the realm, which
// would otherwise hold every writer up while an RSA key is found. Keys
// are never exported, so an imported realm gets fresh ones too.
type RealmKeys struct {
	settings *store.KeySettings
	key      *store.SigningKey
}

// NewRealmKeys makes a new realm's keys with makeKey.
func NewRealmKeys(makeKey KeyMaker, realmID string, now time.Time) (RealmKeys, error) {
	ks := defaultSettings(realmID)
	k, err := generateSigningKey(makeKey, realmID, jose.SignatureAlgorithm(ks.Algorithm), now)
	if err != nil {
		return RealmKeys{}, err
	}
	k.Status, k.ActivatedAt = store.KeyActive, now.UnixMilli()
	return RealmKeys{settings: ks, key: k}, nil
}

// Write stores the keys, inside the transaction that creates the realm.
func (k RealmKeys) Write(ctx context.Context, tx *store.Store) error {
	if err := tx.PutKeySettings(ctx, k.settings); err != nil {
		return err
	}
	return tx.CreateSigningKey(ctx, k.key)
}

// Settings returns a realm's rotation settings; a realm made before
// signing keys existed has the defaults.
func (s *Service) Settings(ctx context.Context, realmID string) (*store.KeySettings, error) {
	ks, err := s.deps.Store.GetKeySettings(ctx, realmID)
	if errors.Is(err, store.ErrNotFound) {
		return defaultSettings(realmID), nil
	}
	return ks, err
}

// ensureActiveKey gives a realm made before signing keys existed an active
// key of its configured algorithm.
func (s *Service) ensureActiveKey(ctx context.Context, realm *store.Realm) error {
	ks, err := s.Settings(ctx, realm.ID)
	if err != nil {
		return err
	}
	now := s.deps.Now()
	k, err := generateSigningKey(s.deps.MakeKey, realm.ID, jose.SignatureAlgorithm(ks.Algorithm), now)
	if err != nil {
		return err
	}
	k.Status, k.ActivatedAt = store.KeyActive, now.UnixMilli()
	err = s.deps.Store.CreateSigningKey(ctx, k)
	if errors.Is(err, store.ErrConflict) {
		return nil // another request made the realm's key first
	}
	return err
}

// Active returns the realm's active key, making the first key of a realm
// made before signing keys existed.
func (s *Service) Active(ctx context.Context, realm *store.Realm) (*Key, error) {
	activeKey := func() (*store.SigningKey, error) {
		return store.Cached(s.deps.Store, s.active, realm.ID, func() (*store.SigningKey, error) {
			return s.deps.Store.GetActiveSigningKey(ctx, realm.ID)
		})
	}
	active, err := activeKey()
	if errors.Is(err, store.ErrNotFound) {
		if err := s.ensureActiveKey(ctx, realm); err != nil {
			return nil, err
		}
		active, err = activeKey()
	}
	if err != nil {
		return nil, err
	}
	if k := s.parsed.get(active.ID); k != nil {
		return k, nil
	}
	der, err := s.deps.Store.SigningKeyPrivate(ctx, realm.ID, active.ID)
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse signing key %s: %w", active.ID, err)
	}
	signer, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("signing key %s is a %T, not a signer", active.ID, parsed)
	}
	k := &Key{ID: active.ID, Algorithm: jose.SignatureAlgorithm(active.Algorithm), Key: signer}
	s.parsed.put(k)
	return k, nil
}

// Public returns every key a realm publishes: next, active and
// retired ones still covering live tokens; public halves only.
// The keys come from the cache, so callers must not change them; which of
// them are still published is decided at every call.
func (s *Service) Public(ctx context.Context, realm *store.Realm) ([]jose.JSONWebKey, error) {
	all, err := store.Cached(s.deps.Store, s.public, realm.ID, func() ([]publishedKey, error) {
		return s.loadPublicKeys(ctx, realm)
	})
	if err != nil {
		return nil, err
	}
	now := s.deps.Now().UnixMilli()
	out := make([]jose.JSONWebKey, 0, len(all))
	for _, k := range all {
		if k.publishUntil == 0 || k.publishUntil > now {
			out = append(out, k.jwk)
		}
	}
	return out, nil
}

// publishedKey is a parsed public key and, for a retired one, until when
// it is published.
type publishedKey struct {
	jwk          jose.JSONWebKey
	publishUntil int64 // Unix milliseconds; 0 for next and active keys
}

func (s *Service) loadPublicKeys(ctx context.Context, realm *store.Realm) ([]publishedKey, error) {
	keys, err := s.deps.Store.PublishedSigningKeys(ctx, realm.ID, s.deps.Now())
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		// A realm made before signing keys existed: make its first one now,
		// so the key set is never empty.
		if err := s.ensureActiveKey(ctx, realm); err != nil {
			return nil, err
		}
		if keys, err = s.deps.Store.PublishedSigningKeys(ctx, realm.ID, s.deps.Now()); err != nil {
			return nil, err
		}
	}
	out := make([]publishedKey, len(keys))
	for i, k := range keys {
		if err := json.Unmarshal([]byte(k.PublicJWK), &out[i].jwk); err != nil {
			return nil, fmt.Errorf("decode public key %s: %w", k.ID, err)
		}
		if k.Status == store.KeyRetired {
			out[i].publishUntil = k.PublishUntil
		}
	}
	return out, nil
}

// retiredKeyLifetime is how long a retired key stays published: every token
// it signed (access and ID tokens, both living accessTokenLifespan) has
// expired by then.
func retiredKeyLifetime(realm *store.Realm) time.Duration {
	return time.Duration(realm.AccessTokenLifespan)*time.Second + RetiredKeyMargin
}

// keyChange is one change to a realm's keys: make sure a next key of
// algorithm exists, and activate it when immediate or once it has been
// published for PublishGrace.
type keyChange struct {
	algorithm jose.SignatureAlgorithm
	immediate bool
	settings  *store.KeySettings // written in the same transaction, when set
}

var errKeysChanged = errors.New("the realm's keys changed during the key change")

// rotateRealmKeys moves a realm's scheduled rotation on one step: it
// publishes a next key of algorithm if there is none (replacing a next key
// of another algorithm), and activates the next key once it has been
// published for PublishGrace, retiring the active one.
func (s *Service) rotateRealmKeys(ctx context.Context, realm *store.Realm, algorithm jose.SignatureAlgorithm) error {
	return s.changeRealmKeys(ctx, realm, keyChange{algorithm: algorithm})
}

// changeRealmKeys applies ch. A new key is generated outside the write
// transaction, which would otherwise hold every writer up while an RSA
// key is found; the transaction then checks that the keys are as they
// were read, and the change starts over if another one came between.
func (s *Service) changeRealmKeys(ctx context.Context, realm *store.Realm, ch keyChange) error {
	for range keyChangeAttempts {
		now := s.deps.Now()
		before, err := s.deps.Store.ListSigningKeys(ctx, realm.ID)
		if err != nil {
			return err
		}
		next := findKey(before, store.KeyNext)
		var fresh *store.SigningKey
		if next == nil || next.Algorithm != string(ch.algorithm) {
			if fresh, err = generateSigningKey(s.deps.MakeKey, realm.ID, ch.algorithm, now); err != nil {
				return err
			}
		}
		err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
			current, err := tx.ListSigningKeys(ctx, realm.ID)
			if err != nil {
				return err
			}
			if keyStates(current) != keyStates(before) {
				return errKeysChanged
			}
			if ch.settings != nil {
				if err := tx.PutKeySettings(ctx, ch.settings); err != nil {
					return err
				}
			}
			if fresh != nil {
				if err := tx.DeleteNextSigningKeys(ctx, realm.ID); err != nil {
					return err
				}
				if err := tx.CreateSigningKey(ctx, fresh); err != nil {
					return err
				}
				next = fresh
			}
			if ch.immediate || now.Sub(time.UnixMilli(next.CreatedAt)) >= PublishGrace {
				return tx.ActivateSigningKey(ctx, realm.ID, next.ID, now, now.Add(retiredKeyLifetime(realm)))
			}
			return nil
		})
		if !errors.Is(err, errKeysChanged) {
			return err
		}
	}
	return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict,
		Message: "the realm's keys kept changing during the rotation; try again", Cause: errKeysChanged}
}

func findKey(keys []*store.SigningKey, status string) *store.SigningKey {
	for _, k := range keys {
		if k.Status == status {
			return k
		}
	}
	return nil
}

// keyStates sums up which keys a realm has, in which states.
func keyStates(keys []*store.SigningKey) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.ID + "=" + k.Status + ";")
	}
	return b.String()
}

// RotateDue is the periodic key upkeep of every realm: it publishes a
// next key PublishGrace before the active one is rotationDays old,
// activates next keys published for PublishGrace, and deletes retired
// keys whose tokens have all expired.
func (s *Service) RotateDue(ctx context.Context) {
	realms, err := s.deps.Store.ListRealms(ctx)
	if err != nil {
		s.logJobError(ctx, "listing realms for key rotation failed", err)
		return
	}
	for _, realm := range realms {
		if err := s.rotateRealmIfDue(ctx, realm); err != nil {
			s.logJobError(ctx, "key rotation failed", err, "realm", realm.Name)
		}
	}
	n, err := s.deps.Store.DeleteExpiredSigningKeys(ctx, s.deps.Now())
	if err != nil {
		s.logJobError(ctx, "deleting expired signing keys failed", err)
		return
	}
	if n > 0 {
		s.deps.Log.Info("deleted expired signing keys", "count", n)
	}
	active, err := s.deps.Store.ActiveSigningKeyIDs(ctx)
	if err != nil {
		s.logJobError(ctx, "listing active signing keys failed", err)
		return
	}
	s.parsed.retain(active)
}

func (s *Service) rotateRealmIfDue(ctx context.Context, realm *store.Realm) error {
	keys, err := s.deps.Store.ListSigningKeys(ctx, realm.ID)
	if err != nil {
		return err
	}
	active, next := findKey(keys, store.KeyActive), findKey(keys, store.KeyNext)
	now := s.deps.Now()
	switch {
	case active == nil:
		return s.ensureActiveKey(ctx, realm)
	case next != nil:
		if now.Sub(time.UnixMilli(next.CreatedAt)) >= PublishGrace {
			return s.rotateRealmKeys(ctx, realm, jose.SignatureAlgorithm(next.Algorithm))
		}
		return nil
	}
	ks, err := s.Settings(ctx, realm.ID)
	if err != nil || ks.RotationDays == 0 {
		return err
	}
	due := time.UnixMilli(active.ActivatedAt).Add(time.Duration(ks.RotationDays)*24*time.Hour - PublishGrace)
	if now.Before(due) {
		return nil
	}
	return s.rotateRealmKeys(ctx, realm, jose.SignatureAlgorithm(ks.Algorithm))
}

// logJobError logs a failure of periodic work, unless the server is
// shutting down and cancelled it.
func (s *Service) logJobError(ctx context.Context, msg string, err error, args ...any) {
	if ctx.Err() == nil {
		s.deps.Log.Error(msg, append(args, "err", err)...)
	}
}
