package adminkeys

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

const (
	maxName     = 100
	maxLifetime = 10 * 365 * 24 * time.Hour
	maxGrace    = 30 * 24 * time.Hour
	// AllPermissions, alone in a key's list, is every permission: those
	// there are and those a later version adds, as the bootstrap key.
	AllPermissions = authz.AllName
	// BootstrapName names the bootstrap key in admin events; no named key
	// takes it.
	BootstrapName = "bootstrap"
)

// The states of a key, which follow from its times.
const (
	stateActive  = "active"
	stateExpired = "expired"
	stateRevoked = "revoked"
)

// APIKeyRep is a key as the API shows it. APIKey, the key itself, is there
// only in the answers to its creation and rotation.
type APIKeyRep struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Prefix      string   `json:"prefix"`
	Permissions []string `json:"permissions"`
	Realm       string   `json:"realm,omitempty"` // the realm it is confined to
	State       string   `json:"state"`
	CreatedAt   int64    `json:"createdAt"` // Unix milliseconds
	CreatedBy   string   `json:"createdBy"`
	ExpiresAt   int64    `json:"expiresAt,omitempty"`
	LastUsedAt  int64    `json:"lastUsedAt,omitempty"` // to the minute
	RevokedAt   int64    `json:"revokedAt,omitempty"`
	RotatedAt   int64    `json:"rotatedAt,omitempty"`
	// PreviousSecretValidUntil is when the secret the last rotation
	// replaced stops working, while it still works.
	PreviousSecretValidUntil int64  `json:"previousSecretValidUntil,omitempty"`
	APIKey                   string `json:"apiKey,omitempty"`
}

func (s *Service) rep(r *http.Request, k *store.AdminAPIKey) (APIKeyRep, error) {
	now := s.now().UnixMilli()
	rep := APIKeyRep{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Permissions: k.Permissions, State: stateActive,
		CreatedAt: k.CreatedAt, CreatedBy: k.CreatedBy, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt,
		RevokedAt: k.RevokedAt, RotatedAt: k.RotatedAt}
	switch {
	case k.RevokedAt != 0:
		rep.State = stateRevoked
	case k.ExpiresAt != 0 && k.ExpiresAt <= now:
		rep.State = stateExpired
	case len(k.PreviousHash) > 0 && k.PreviousUntil > now:
		rep.PreviousSecretValidUntil = k.PreviousUntil
	}
	if k.RealmID != "" {
		realm, err := s.deps.Store.GetRealmByID(r.Context(), k.RealmID)
		if err != nil {
			return APIKeyRep{}, err
		}
		rep.Realm = realm.Name
	}
	return rep, nil
}

// checkGrant refuses a key holding a permission the caller lacks: whoever
// holds the key acts with it. verb says what the caller would do.
func (s *Service) checkGrant(r *http.Request, name string, perms []string, verb string) error {
	held := s.deps.CallerPermissions(r)
	want := perms
	if slices.Equal(perms, []string{AllPermissions}) {
		want = authz.Names(authz.Everything())
	}
	for _, p := range want {
		if !held.Has(authz.Permission(p)) {
			return apperr.Forbidden("admin API key %s holds the permission %s: it cannot be %s by a caller that does not hold it",
				name, p, verb)
		}
	}
	return nil
}

// caller names who makes the request: its kind and name ("user:root",
// "api-key:deploy", "api-key:bootstrap"), its ID when it has no name.
func (s *Service) caller(r *http.Request) string {
	act := s.deps.Caller(r)
	if act.Name == "" {
		return act.Type + ":" + act.ID
	}
	return act.Type + ":" + act.Name
}

// List lists every key by name, without secrets.
func (s *Service) List(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.deps.Store.ListAdminAPIKeys(r.Context())
	if err != nil {
		return err
	}
	out := make([]APIKeyRep, 0, len(keys))
	for _, k := range keys {
		rep, err := s.rep(r, k)
		if err != nil {
			return err
		}
		out = append(out, rep)
	}
	return httpx.OK(w, out)
}

// key loads the key the path names.
func (s *Service) key(r *http.Request) (*store.AdminAPIKey, error) {
	return httpx.Child(r, "id", "admin API key", s.deps.Store.GetAdminAPIKey)
}

// Get shows one key, without its secret.
func (s *Service) Get(w http.ResponseWriter, r *http.Request) error {
	k, err := s.key(r)
	if err != nil {
		return err
	}
	rep, err := s.rep(r, k)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// APIKeyRotation is the optional body of a rotation: how long, in
// seconds, the old secret keeps working.
type APIKeyRotation struct {
	GraceSeconds int64 `json:"graceSeconds"`
}

// APIKeyCreate is the body that creates a key.
type APIKeyCreate struct {
	Name          *string  `json:"name"`
	Permissions   []string `json:"permissions"`
	Realm         string   `json:"realm"`
	ExpiresAt     int64    `json:"expiresAt"` // Unix milliseconds
	ExpiresInDays int64    `json:"expiresInDays"`
}

// Create makes a key: {"name", "permissions", "realm"?, "expiresAt"? or
// "expiresInDays"?}. The answer holds the key, which is never shown again.
func (s *Service) Create(w http.ResponseWriter, r *http.Request) error {
	var body APIKeyCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Name == nil || *body.Name == "" {
		return apperr.Field("name", "is required")
	}
	if err := validate.Identifier("name", *body.Name, maxName); err != nil {
		return err
	}
	if *body.Name == BootstrapName {
		return apperr.Field("name", "%s names the bootstrap key in admin events: choose another", BootstrapName)
	}
	perms, err := checkPermissions(body.Permissions)
	if err != nil {
		return err
	}
	now := s.now()
	k := &store.AdminAPIKey{ID: newID(), Name: *body.Name, Permissions: perms, CreatedAt: now.UnixMilli()}
	switch {
	case body.ExpiresAt != 0 && body.ExpiresInDays != 0:
		return apperr.Field("expiresInDays", "give expiresAt or expiresInDays, not both")
	case body.ExpiresAt != 0:
		if body.ExpiresAt <= k.CreatedAt || body.ExpiresAt > now.Add(maxLifetime).UnixMilli() {
			return apperr.Field("expiresAt", "must be in the future (Unix milliseconds), at most %d days ahead", maxLifetime/(24*time.Hour))
		}
		k.ExpiresAt = body.ExpiresAt
	case body.ExpiresInDays != 0:
		if body.ExpiresInDays < 0 || time.Duration(body.ExpiresInDays)*24*time.Hour > maxLifetime {
			return apperr.Field("expiresInDays", "must be between 1 and %d", maxLifetime/(24*time.Hour))
		}
		k.ExpiresAt = now.Add(time.Duration(body.ExpiresInDays) * 24 * time.Hour).UnixMilli()
	}
	if body.Realm != "" {
		realm, err := s.deps.Store.GetRealm(r.Context(), body.Realm)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.Field("realm", "no realm %q", body.Realm)
		} else if err != nil {
			return err
		}
		k.RealmID = realm.ID
		if err := authz.CheckConfined(k.Permissions); err != nil {
			return apperr.Field("permissions", "%v", err)
		}
	}
	if err := s.checkGrant(r, k.Name, k.Permissions, "made"); err != nil {
		return err
	}
	k.CreatedBy = s.caller(r)
	key, prefix, hash := newSecret(k.ID)
	k.Prefix, k.SecretHash = prefix, hash
	if err := s.deps.Store.CreateAdminAPIKey(r.Context(), k); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return apperr.Conflict("name", "an admin API key named %q exists", k.Name)
		}
		return err
	}
	rep, err := s.rep(r, k)
	if err != nil {
		return err
	}
	s.deps.Log.InfoContext(r.Context(), "admin API key created", "key", k.ID, "name", k.Name, "by", k.CreatedBy)
	rep.APIKey = key
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+k.ID, rep)
}

// checkPermissions checks a new key's permission names (authz.ParseGrant).
func checkPermissions(names []string) ([]string, error) {
	perms, err := authz.ParseGrant(names)
	if err != nil {
		return nil, apperr.Field("permissions", "%v", err)
	}
	return perms, nil
}

// Rotate gives a key a new secret, shown once in the answer. The old one
// stops working at once, or after {"graceSeconds": n} (at most 30 days),
// so that a running job can switch; a second rotation ends the first
// one's grace.
func (s *Service) Rotate(w http.ResponseWriter, r *http.Request) error {
	var body APIKeyRotation
	if r.ContentLength != 0 {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	grace := time.Duration(body.GraceSeconds) * time.Second
	if body.GraceSeconds < 0 || grace > maxGrace {
		return apperr.Field("graceSeconds", "must be between 0 and %d", int64(maxGrace/time.Second))
	}
	var key, id string
	err := s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		k, err := httpx.Child(r, "id", "admin API key", tx.GetAdminAPIKey)
		if err != nil {
			return err
		}
		id = k.ID
		now := s.now().UnixMilli()
		if k.RevokedAt != 0 || (k.ExpiresAt != 0 && k.ExpiresAt <= now) {
			return apperr.New(http.StatusConflict, apperr.CodeInvalidState,
				"admin API key %s no longer works: create a new one instead", k.Name)
		}
		if err := s.checkGrant(r, k.Name, k.Permissions, "rotated"); err != nil {
			return err
		}
		var prefix string
		var hash []byte
		key, prefix, hash = newSecret(k.ID)
		return tx.RotateAdminAPIKey(r.Context(), k.ID, hash, prefix, now, now+grace.Milliseconds())
	})
	if err != nil {
		return err
	}
	k, err := s.deps.Store.GetAdminAPIKey(r.Context(), id)
	if err != nil {
		return err
	}
	rep, err := s.rep(r, k)
	if err != nil {
		return err
	}
	s.deps.Log.InfoContext(r.Context(), "admin API key rotated", "key", k.ID, "name", k.Name, "by", s.caller(r),
		"graceSeconds", body.GraceSeconds)
	rep.APIKey = key
	return httpx.OK(w, rep)
}

// Revoke makes a key, and a previous secret still in its grace, stop
// working now. Revoking a revoked key changes nothing.
func (s *Service) Revoke(w http.ResponseWriter, r *http.Request) error {
	k, err := s.key(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.RevokeAdminAPIKey(r.Context(), k.ID, s.now().UnixMilli()); err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	s.deps.Log.InfoContext(r.Context(), "admin API key revoked", "key", k.ID, "name", k.Name, "by", s.caller(r))
	return httpx.NoContent(w)
}
