package scim

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// maxTokenName bounds a token's name, in characters.
const maxTokenName = 100

// TokenRep is a SCIM token as the admin API shows it. Token, the
// credential itself, is there only in the answer to its creation.
type TokenRep struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Status     string `json:"status"` // active, disabled, expired or revoked
	Enabled    bool   `json:"enabled"`
	CreatedAt  int64  `json:"createdAt"`            // Unix milliseconds
	ExpiresAt  int64  `json:"expiresAt,omitempty"`  // Unix milliseconds; absent for no expiry
	RevokedAt  int64  `json:"revokedAt,omitempty"`  // Unix milliseconds; absent while not revoked
	LastUsedAt int64  `json:"lastUsedAt,omitempty"` // Unix milliseconds; absent when never used
	UseCount   int64  `json:"useCount"`
	Token      string `json:"token,omitempty"`
}

// TokenCreate is the body of a token's creation.
type TokenCreate struct {
	Name      string `json:"name"`
	ExpiresAt int64  `json:"expiresAt"` // Unix milliseconds; 0 for no expiry
}

// Token states.
const (
	tokenActive   = "active"
	tokenDisabled = "disabled"
	tokenExpired  = "expired"
	tokenRevoked  = "revoked"
)

// tokenStatus is what t is at now (Unix milliseconds); a revoked token is
// revoked whatever else holds.
func tokenStatus(t *store.SCIMToken, now int64) string {
	switch {
	case t.RevokedAt != 0:
		return tokenRevoked
	case t.ExpiresAt != 0 && t.ExpiresAt <= now:
		return tokenExpired
	case !t.Enabled:
		return tokenDisabled
	}
	return tokenActive
}

func (s *Service) tokenRep(t *store.SCIMToken) TokenRep {
	return TokenRep{ID: t.ID, Name: t.Name, Status: tokenStatus(t, s.deps.Now().UnixMilli()), Enabled: t.Enabled,
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, RevokedAt: t.RevokedAt, LastUsedAt: t.LastUsedAt, UseCount: t.UseCount}
}

// newTokenSecret makes a token's credential: "<id>.<secret>", the secret
// 256 random bits, and the SHA-256 of the secret to store.
func newTokenSecret(id string) (credential string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	secret := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(secret))
	return id + "." + secret, sum[:]
}

// TokenPermissions are what a SCIM token amounts to in admin permissions:
// it reads, creates, changes and deletes the realm's users (their
// passwords included) and groups. Only a caller holding them all creates
// one, so that scim:write grants nothing its holder lacks.
var TokenPermissions = []authz.Permission{authz.UsersRead, authz.UsersWrite, authz.GroupsRead, authz.GroupsWrite}

// CreateToken makes a token of the realm: {"name", "expiresAt"}. The
// answer holds the credential, which is never shown again.
func (s *Service) CreateToken(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	held := s.deps.CallerPermissions(r)
	for _, p := range TokenPermissions {
		if !held.Has(p) {
			return apperr.Forbidden("a SCIM token writes users and groups: it cannot be created by a caller that does not hold the permission %s", p)
		}
	}
	var body TokenCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Name == "" {
		return apperr.Field("name", "is required")
	}
	if err := validate.DisplayName("name", body.Name, maxTokenName); err != nil {
		return err
	}
	now := s.deps.Now().UnixMilli()
	if body.ExpiresAt != 0 && body.ExpiresAt <= now {
		return apperr.Field("expiresAt", "must be in the future (Unix milliseconds)")
	}
	t := &store.SCIMToken{ID: uuid.NewString(), RealmID: realm.ID, Name: body.Name, Enabled: true,
		ExpiresAt: body.ExpiresAt, CreatedAt: now}
	credential, hash := newTokenSecret(t.ID)
	t.SecretHash = hash
	if err := s.deps.Store.CreateSCIMToken(r.Context(), t); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return apperr.Conflict("name", "a SCIM token named %q exists", body.Name)
		}
		return err
	}
	rep := s.tokenRep(t)
	rep.Token = credential
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+t.ID, rep)
}

// ListTokens lists the realm's tokens, without their credentials.
func (s *Service) ListTokens(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	list, err := s.deps.Store.ListSCIMTokens(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, list, s.tokenRep)
}

// token loads the realm and the token the path names.
func (s *Service) token(r *http.Request) (*store.Realm, *store.SCIMToken, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	t, err := httpx.ChildOf(r, realm.ID, "tokenId", "SCIM token", s.deps.Store.GetSCIMToken)
	return realm, t, err
}

// GetToken shows one token.
func (s *Service) GetToken(w http.ResponseWriter, r *http.Request) error {
	_, t, err := s.token(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, s.tokenRep(t))
}

// DeleteToken deletes a token: requests with it fail from now on.
func (s *Service) DeleteToken(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.token(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteSCIMToken(r.Context(), realm.ID, t.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// RevokeToken revokes a token for good; it stays listed, as revoked.
func (s *Service) RevokeToken(w http.ResponseWriter, r *http.Request) error {
	realm, t, err := s.token(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.RevokeSCIMToken(r.Context(), realm.ID, t.ID, s.deps.Now().UnixMilli()); err != nil {
		return err
	}
	return s.answerToken(w, r, realm, t.ID)
}

// EnableToken enables a disabled token; a revoked one cannot be.
func (s *Service) EnableToken(w http.ResponseWriter, r *http.Request) error {
	return s.setEnabled(w, r, true)
}

// DisableToken disables a token until it is enabled again.
func (s *Service) DisableToken(w http.ResponseWriter, r *http.Request) error {
	return s.setEnabled(w, r, false)
}

func (s *Service) setEnabled(w http.ResponseWriter, r *http.Request, enabled bool) error {
	realm, t, err := s.token(r)
	if err != nil {
		return err
	}
	if t.RevokedAt != 0 {
		return apperr.Conflict("", "SCIM token %s is revoked: create a new one", t.ID)
	}
	if err := s.deps.Store.SetSCIMTokenEnabled(r.Context(), realm.ID, t.ID, enabled); err != nil {
		return err
	}
	return s.answerToken(w, r, realm, t.ID)
}

// answerToken answers the token as it is stored now.
func (s *Service) answerToken(w http.ResponseWriter, r *http.Request, realm *store.Realm, id string) error {
	t, err := s.deps.Store.GetSCIMToken(r.Context(), realm.ID, id)
	if err != nil {
		return err
	}
	return httpx.OK(w, s.tokenRep(t))
}
