package nhi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxCredentialLifetime = 10 * 365 * 24 * time.Hour
	maxGracePeriod        = 30 * 24 * time.Hour
	maxScopes             = 50
)

// NHICredentialRep is a credential as the API shows it. Secret (a client
// secret) and APIKey are set only in the answer that issues them: only
// their hashes are kept.
type NHICredentialRep struct {
	ID                string          `json:"id"`
	Type              string          `json:"type"`
	Name              string          `json:"name"`
	Prefix            string          `json:"prefix,omitempty"`    // api_key
	KeyID             string          `json:"keyId,omitempty"`     // public_key, certificate
	PublicKey         json.RawMessage `json:"publicKey,omitempty"` // public_key, certificate: the JWK
	Certificate       string          `json:"certificate,omitempty"`
	Scopes            []string        `json:"scopes"`
	State             string          `json:"state"`
	CreatedTimestamp  int64           `json:"createdTimestamp"`
	ExpiresTimestamp  *int64          `json:"expiresTimestamp"`
	RevokedTimestamp  *int64          `json:"revokedTimestamp"` // may be ahead: the end of a rotation's grace period
	LastUsedTimestamp *int64          `json:"lastUsedTimestamp"`
	ReplacedBy        string          `json:"replacedBy,omitempty"`
	Replaces          string          `json:"replaces,omitempty"` // the answer to a rotation
	Secret            string          `json:"secret,omitempty"`
	APIKey            string          `json:"apiKey,omitempty"`
}

func optionalTime(t int64) *int64 {
	if t == 0 {
		return nil
	}
	return &t
}

// NHICredentialRep shows c as it is at now.
func toCredentialRep(c *store.NHICredential, now int64) NHICredentialRep {
	rep := NHICredentialRep{ID: c.ID, Type: c.Type, Name: c.Name, Prefix: c.Prefix, KeyID: c.KeyID,
		Certificate: c.Certificate, Scopes: c.Scopes, State: identity.CredentialState(c, now), CreatedTimestamp: c.CreatedAt,
		ExpiresTimestamp: optionalTime(c.ExpiresAt), RevokedTimestamp: optionalTime(c.RevokedAt),
		LastUsedTimestamp: optionalTime(c.LastUsedAt), ReplacedBy: c.ReplacedBy}
	if c.PublicKey != "" {
		rep.PublicKey = json.RawMessage(c.PublicKey)
	}
	if rep.Scopes == nil {
		rep.Scopes = []string{}
	}
	return rep
}

// NHICredentialCreate is the body that issues a credential.
type NHICredentialCreate struct {
	Type      *string         `json:"type"`
	Name      *string         `json:"name"`
	ExpiresIn *int64          `json:"expiresIn"` // seconds from now; left out: never
	Scopes    *[]string       `json:"scopes"`
	PublicKey json.RawMessage `json:"publicKey"`
}

// credentialPath loads the realm, the identity and the credential the path
// names.
func (s *Service) credential(r *http.Request) (*store.Realm, *store.NHI, *store.NHICredential, error) {
	realm, n, err := s.identity(r)
	if err != nil {
		return nil, nil, nil, err
	}
	v := viewOf(r)
	c, err := httpx.ChildOf(r, n.ID, v.credParam, v.credWhat, s.deps.Store.GetNHICredential)
	if err == nil && v.credType != "" && c.Type != v.credType {
		return nil, nil, nil, apperr.NotFound(v.credWhat + " " + c.ID)
	}
	return realm, n, c, err
}

// CreateCredential issues a credential of the body's type; a secret or an
// API key is in the answer, once.
func (s *Service) CreateCredential(w http.ResponseWriter, r *http.Request) error {
	realm, n, err := s.identity(r)
	if err != nil {
		return err
	}
	if err := identity.CheckNHIWritable(n); err != nil {
		return err
	}
	var body NHICredentialCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if v := viewOf(r); v.credType != "" {
		if body.Type != nil && *body.Type != v.credType {
			return apperr.Field("type", "must be %s here", v.credType)
		}
		body.Type = &v.credType
	}
	if body.Type == nil {
		return apperr.Field("type", "is required: one of %s", strings.Join(identity.CredentialTypes, ", "))
	}
	now := s.now()
	c := &store.NHICredential{Type: *body.Type, CreatedAt: now.UnixMilli()}
	if body.Name != nil {
		c.Name = *body.Name
	}
	if body.Scopes != nil {
		c.Scopes = *body.Scopes
	}
	if body.ExpiresIn != nil {
		d := time.Duration(*body.ExpiresIn) * time.Second
		if *body.ExpiresIn <= 0 || d > maxCredentialLifetime {
			return apperr.Field("expiresIn", "must be between 1 and %d seconds", int64(maxCredentialLifetime/time.Second))
		}
		c.ExpiresAt = now.Add(d).UnixMilli()
	}
	issued, err := s.issue(r, realm, n, c, body.PublicKey, nil)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.location(r, issued.ID), issued)
}

// rotation is what a rotation revokes: the old credential, at the end of
// the grace period.
type rotation struct {
	oldID string
	grace time.Duration
}

// issue checks c, of n, completes it (its secret or key), and stores it;
// with rot, the same transaction marks the old credential replaced. The
// answer carries the secret. A caller that reckoned c's expiry from the
// clock sets c.CreatedAt to the same reading, so that the lifetime asked
// for is the lifetime stored.
func (s *Service) issue(r *http.Request, realm *store.Realm, n *store.NHI, c *store.NHICredential, publicKey json.RawMessage,
	rot *rotation) (NHICredentialRep, error) {
	if err := validate.Text("name", c.Name, 255); err != nil {
		return NHICredentialRep{}, err
	}
	if err := checkScopes(c); err != nil {
		return NHICredentialRep{}, err
	}
	if c.CreatedAt == 0 {
		c.CreatedAt = s.now().UnixMilli()
	}
	now := c.CreatedAt
	c.ID, c.RealmID, c.NHIID = uuid.NewString(), realm.ID, n.ID
	p, err := s.identityPolicy(r.Context(), n)
	if err != nil {
		return NHICredentialRep{}, err
	}
	c.ExpiresAt = identity.PolicyExpiry(p, now, c.ExpiresAt)
	var secret, apiKey string
	switch c.Type {
	case identity.CredClientSecret:
		secret, c.SecretHash = identity.NewClientSecret()
	case identity.CredAPIKey:
		apiKey, c.Prefix, c.SecretHash = identity.NewAPIKey()
	case identity.CredPublicKey:
		if len(publicKey) == 0 || string(publicKey) == "null" {
			return NHICredentialRep{}, apperr.Field("publicKey", "is required for a %s", identity.CredPublicKey)
		}
		key, err := identity.ParsePublicKey(publicKey)
		if err != nil {
			return NHICredentialRep{}, err
		}
		jwk, err := key.MarshalJSON()
		if err != nil {
			return NHICredentialRep{}, err
		}
		c.PublicKey, c.KeyID = string(jwk), key.KeyID
	case identity.CredCertificate:
		// Made by IssueCertificate and DeviceCertificate, which fill it in.
		if c.Certificate == "" {
			return NHICredentialRep{}, apperr.Field("type", "a certificate is issued by POST .../nhi/{id}/certificate")
		}
	default:
		return NHICredentialRep{}, apperr.Field("type", "must be one of %s", strings.Join(identity.CredentialTypes, ", "))
	}
	if c.Type != identity.CredPublicKey && len(publicKey) != 0 {
		return NHICredentialRep{}, apperr.Field("publicKey", "is only for a %s", identity.CredPublicKey)
	}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		cur, err := tx.GetNHI(r.Context(), realm.ID, n.ID)
		if err != nil {
			return err
		}
		if err := identity.CheckNHIWritable(cur); err != nil {
			return err
		}
		// On the identity as the transaction sees it, so that a grant made
		// meanwhile is not missed.
		if err := s.checkIssue(r, cur); err != nil {
			return err
		}
		if err := checkRoom(r, tx, n, c, rot, now); err != nil {
			return err
		}
		if err := tx.CreateNHICredential(r.Context(), c); err != nil {
			return err
		}
		if rot == nil {
			return s.audit(r, tx, n, c.ID, identity.AuditCredentialIssue, c.Type)
		}
		if err := markReplaced(r, tx, n, rot, c.ID, now); err != nil {
			return err
		}
		return s.audit(r, tx, n, c.ID, identity.AuditCredentialRotate,
			fmt.Sprintf("replaces %s, which works %d s more", rot.oldID, int64(rot.grace/time.Second)))
	})
	if err != nil {
		return NHICredentialRep{}, err
	}
	rep := toCredentialRep(c, now)
	rep.Secret, rep.APIKey = secret, apiKey
	if rot != nil {
		rep.Replaces = rot.oldID
	}
	return rep, nil
}

// checkRoom refuses a credential past the identity's limit of working
// ones (a rotated one, on its way out, not counted), and a second public
// key with the same kid among them: an assertion names its key by kid.
func checkRoom(r *http.Request, tx *store.Store, n *store.NHI, c *store.NHICredential, rot *rotation, now int64) error {
	all, err := tx.ListNHICredentials(r.Context(), n.ID)
	if err != nil {
		return err
	}
	working := 0
	for _, o := range all {
		if identity.CredentialState(o, now) != identity.CredActive {
			continue
		}
		if rot == nil || o.ID != rot.oldID {
			working++
		}
		// A certificate renewed for the same key is no ambiguity: either
		// verifies what the other does.
		sameCertifiedKey := c.Type == identity.CredCertificate && o.PublicKey == c.PublicKey
		if c.KeyID != "" && o.KeyID == c.KeyID && !sameCertifiedKey {
			return apperr.Conflict("publicKey", "identity %s already has a working key with kid %s", n.Name, c.KeyID)
		}
	}
	if working >= identity.MaxWorkingCredentials {
		return apperr.New(http.StatusConflict, apperr.CodeConflict,
			"identity %s has %d working credentials, the most it may have: revoke one first", n.Name, working)
	}
	return nil
}

// checkScopes checks the scope names an API key is limited to; only an
// API key carries them.
func checkScopes(c *store.NHICredential) error {
	if len(c.Scopes) == 0 {
		return nil
	}
	if c.Type != identity.CredAPIKey {
		return apperr.Field("scopes", "are only for an %s", identity.CredAPIKey)
	}
	if len(c.Scopes) > maxScopes {
		return apperr.Field("scopes", "must have at most %d entries", maxScopes)
	}
	out := make([]string, 0, len(c.Scopes))
	for _, sc := range c.Scopes {
		if sc == "" || len(sc) > 255 || strings.ContainsFunc(sc, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r > '~' }) {
			return apperr.Field("scopes", "%q is not a scope name (RFC 6749 §3.3)", sc)
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	c.Scopes = out
	return nil
}

// ListCredentials lists an identity's credentials, oldest first, in the
// state each is in now; never a secret.
func (s *Service) ListCredentials(w http.ResponseWriter, r *http.Request) error {
	s.settle(r.Context())
	_, n, err := s.identity(r)
	if err != nil {
		return err
	}
	var types []string
	if v := viewOf(r); v.credType != "" {
		types = []string{v.credType}
	}
	list, err := s.deps.Store.ListNHICredentials(r.Context(), n.ID, types...)
	if err != nil {
		return err
	}
	now := s.now().UnixMilli()
	return httpx.List(w, list, func(c *store.NHICredential) NHICredentialRep { return toCredentialRep(c, now) })
}

// RevokeCredential makes a credential stop working now (also one whose
// rotation's grace period is still running). Revoking a revoked one
// changes nothing.
func (s *Service) RevokeCredential(w http.ResponseWriter, r *http.Request) error {
	_, n, c, err := s.credential(r)
	if err != nil {
		return err
	}
	if err := identity.CheckNHIWritable(n); err != nil {
		return err
	}
	now := s.now().UnixMilli()
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.RevokeNHICredential(r.Context(), n.ID, c.ID, now, ""); err != nil {
			return err
		}
		return s.audit(r, tx, n, c.ID, identity.AuditCredentialRevoke, c.Type)
	})
	if err != nil {
		return err
	}
	if c, err = s.deps.Store.GetNHICredential(r.Context(), n.ID, c.ID); err != nil {
		return err
	}
	return httpx.OK(w, toCredentialRep(c, now))
}

// NHICredentialRotation is the optional body of a rotation.
type NHICredentialRotation struct {
	// GracePeriod is how long, in seconds, the old credential keeps
	// working beside its replacement; 0 (the default) revokes it at once.
	GracePeriod *int64 `json:"gracePeriod"`
	// ExpiresIn is the replacement's lifetime in seconds; left out, the
	// old one's lifetime, or never when it had none.
	ExpiresIn *int64 `json:"expiresIn"`
	// PublicKey is the replacement of a public key: a key is made by its
	// holder, so a rotation brings the new one.
	PublicKey json.RawMessage `json:"publicKey"`
}

// RotateCredential issues a replacement of a working credential, of its
// type, name and scopes, and revokes the old one at once or at the end of
// the grace period the caller chooses. The answer is the replacement,
// with its secret, once.
func (s *Service) RotateCredential(w http.ResponseWriter, r *http.Request) error {
	realm, n, old, err := s.credential(r)
	if err != nil {
		return err
	}
	if err := identity.CheckNHIWritable(n); err != nil {
		return err
	}
	// The body is optional: a rotation without one revokes the old
	// credential at once and keeps its lifetime.
	var body NHICredentialRotation
	if r.ContentLength != 0 {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	now := s.now()
	p, err := s.identityPolicy(r.Context(), n)
	if err != nil {
		return err
	}
	grace := time.Duration(0)
	if p != nil {
		grace = time.Duration(p.GracePeriod) * time.Second
	}
	if body.GracePeriod != nil {
		grace = time.Duration(*body.GracePeriod) * time.Second
		if *body.GracePeriod < 0 || grace > maxGracePeriod {
			return apperr.Field("gracePeriod", "must be between 0 and %d seconds", int64(maxGracePeriod/time.Second))
		}
	}
	if err := checkRotatable(old, now.UnixMilli()); err != nil {
		return err
	}
	if old.Type == identity.CredCertificate {
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState,
			"a certificate is renewed by issuing a new one (POST .../certificate), then revoking this one")
	}
	repl := &store.NHICredential{Type: old.Type, Name: old.Name, Scopes: old.Scopes, CreatedAt: now.UnixMilli()}
	switch {
	case body.ExpiresIn != nil:
		d := time.Duration(*body.ExpiresIn) * time.Second
		if *body.ExpiresIn <= 0 || d > maxCredentialLifetime {
			return apperr.Field("expiresIn", "must be between 1 and %d seconds", int64(maxCredentialLifetime/time.Second))
		}
		repl.ExpiresAt = now.Add(d).UnixMilli()
	case old.ExpiresAt != 0:
		repl.ExpiresAt = now.UnixMilli() + (old.ExpiresAt - old.CreatedAt)
	}
	issued, err := s.issue(r, realm, n, repl, body.PublicKey, &rotation{oldID: old.ID, grace: grace})
	if err != nil {
		return err
	}
	return httpx.Created(w, strings.TrimSuffix(s.deps.BaseURL+r.URL.Path, "/"+old.ID+"/rotate")+"/"+issued.ID, issued)
}

// checkRotatable refuses to rotate what no longer works, or what a
// rotation already replaced: its replacement is the one to rotate.
func checkRotatable(c *store.NHICredential, now int64) error {
	if st := identity.CredentialState(c, now); st != identity.CredActive {
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState, "credential %s is %s: issue a new one instead", c.ID, st)
	}
	if c.ReplacedBy != "" {
		return apperr.New(http.StatusConflict, apperr.CodeInvalidState,
			"credential %s was already rotated: rotate its replacement %s", c.ID, c.ReplacedBy)
	}
	return nil
}

// markReplaced revokes the rotated credential at the end of the grace
// period, naming its replacement, after checking again, inside the
// transaction, that no concurrent rotation replaced it first.
func markReplaced(r *http.Request, tx *store.Store, n *store.NHI, rot *rotation, newID string, now int64) error {
	old, err := tx.GetNHICredential(r.Context(), n.ID, rot.oldID)
	if err != nil {
		return err
	}
	if err := checkRotatable(old, now); err != nil {
		return err
	}
	return tx.RevokeNHICredential(r.Context(), n.ID, rot.oldID, now+rot.grace.Milliseconds(), newID)
}

// identityPolicy is n's credential policy, or nil.
func (s *Service) identityPolicy(ctx context.Context, n *store.NHI) (*store.NHIPolicy, error) {
	if n.PolicyID == "" {
		return nil, nil
	}
	p, err := s.deps.Store.GetNHIPolicy(ctx, n.RealmID, n.PolicyID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return p, err
}
