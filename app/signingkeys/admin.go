package signingkeys

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/go-jose/go-jose/v4"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// KeyRep is a signing key as the admin API shows it: metadata and the
// public JWK, never the private half.
type KeyRep struct {
	KID                string          `json:"kid"`
	Algorithm          string          `json:"algorithm"`
	Status             string          `json:"status"`
	CreatedTimestamp   int64           `json:"createdTimestamp"`
	ActivatedTimestamp int64           `json:"activatedTimestamp,omitempty"`
	RetiredTimestamp   int64           `json:"retiredTimestamp,omitempty"`
	PublishUntil       int64           `json:"publishUntil,omitempty"`
	PublicKey          json.RawMessage `json:"publicKey"`
}

func toKeyRep(k *store.SigningKey) KeyRep {
	return KeyRep{KID: k.ID, Algorithm: k.Algorithm, Status: k.Status, CreatedTimestamp: k.CreatedAt,
		ActivatedTimestamp: k.ActivatedAt, RetiredTimestamp: k.RetiredAt, PublishUntil: k.PublishUntil,
		PublicKey: json.RawMessage(k.PublicJWK)}
}

// writeKeys answers with every stored key of the realm: next keys first,
// then the active one, then retired ones, newest first.
func (s *Service) writeKeys(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	keys, err := s.deps.Store.ListSigningKeys(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, keys, toKeyRep)
}

// List answers with the realm's keys.
func (s *Service) List(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	return s.writeKeys(w, r, realm)
}

// KeyRotateRequest is the optional body of a rotation.
type KeyRotateRequest struct {
	Algorithm *string `json:"algorithm"` // default: the realm's configured algorithm
	Immediate bool    `json:"immediate"`
}

// Rotate publishes a next key that the rotation job activates once it
// has been published for PublishGrace or, with immediate, activates a
// key at once; either way the old key stays published while tokens it
// signed live. An algorithm given becomes the realm's setting, so later
// scheduled rotations keep it. It answers with the realm's keys.
func (s *Service) Rotate(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body KeyRotateRequest
	if r.ContentLength != 0 {
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	ks, err := s.Settings(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	ch := keyChange{algorithm: jose.SignatureAlgorithm(ks.Algorithm), immediate: body.Immediate}
	if body.Algorithm != nil {
		alg, err := keyAlgorithm(*body.Algorithm)
		if err != nil {
			return err
		}
		if alg != ch.algorithm {
			ks.Algorithm, ch.algorithm, ch.settings = string(alg), alg, ks
		}
	}
	if err := s.changeRealmKeys(r.Context(), realm, ch); err != nil {
		return err
	}
	return s.writeKeys(w, r, realm)
}

func keyAlgorithm(name string) (jose.SignatureAlgorithm, error) {
	alg := jose.SignatureAlgorithm(name)
	if !slices.Contains(algorithms, alg) {
		return "", apperr.Field("algorithm", "must be one of %v", algorithms)
	}
	return alg, nil
}

// KeyConfigRep is a realm's key rotation settings.
type KeyConfigRep struct {
	Algorithm    string `json:"algorithm"`
	RotationDays int    `json:"rotationDays"`
}

func toKeyConfigRep(ks *store.KeySettings) KeyConfigRep {
	return KeyConfigRep{Algorithm: ks.Algorithm, RotationDays: ks.RotationDays}
}

// GetConfig answers with the realm's key rotation settings.
func (s *Service) GetConfig(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	ks, err := s.Settings(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	return httpx.OK(w, toKeyConfigRep(ks))
}

// PutConfig changes the fields the body names, as every PUT does. A new
// algorithm schedules a rotation to a key of it: a next key is published
// now and signs once the rotation job finds it published for
// PublishGrace (the rotate endpoint with immediate switches at once).
func (s *Service) PutConfig(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	ks, err := s.Settings(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	defaults := map[string]any{"algorithm": string(defaultKeyAlgorithm), "rotationDays": defaultKeyRotationDays}
	cfg, err := httpx.ReadUpdate[KeyConfigRep](r, toKeyConfigRep(ks), defaults)
	if err != nil {
		return err
	}
	alg, err := keyAlgorithm(cfg.Algorithm)
	if err != nil {
		return err
	}
	if cfg.RotationDays < 0 || cfg.RotationDays > maxKeyRotationDays {
		return apperr.Field("rotationDays", "must be between 0 (rotate only on request) and %d", maxKeyRotationDays)
	}
	changed := string(alg) != ks.Algorithm
	ks.Algorithm, ks.RotationDays = string(alg), cfg.RotationDays
	if changed {
		err = s.changeRealmKeys(r.Context(), realm, keyChange{algorithm: alg, settings: ks})
	} else {
		err = s.deps.Store.PutKeySettings(r.Context(), ks)
	}
	if err != nil {
		return err
	}
	return httpx.OK(w, cfg)
}
