package saml

import (
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Settings is a realm's SAML identity provider settings as the admin API
// shows them and the realm export writes them.
type Settings struct {
	// WantAuthnRequestsSigned is published in the metadata; when set, an
	// AuthnRequest of an SP without a certificate is refused.
	WantAuthnRequestsSigned bool `json:"wantAuthnRequestsSigned"`
}

// ToSettings is st as the admin API shows it.
func ToSettings(st *store.SAMLSettings) Settings {
	return Settings{WantAuthnRequestsSigned: st.WantAuthnRequestsSigned}
}

// StoreSettings is s as stored for realmID.
func StoreSettings(realmID string, s Settings) *store.SAMLSettings {
	return &store.SAMLSettings{RealmID: realmID, WantAuthnRequestsSigned: s.WantAuthnRequestsSigned}
}

var settingsDefaults = map[string]any{"wantAuthnRequestsSigned": false}

// GetSettings answers GET /admin/realms/{realm}/saml/settings.
func (s *Service) GetSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.AdminRealm(r)
	if err != nil {
		return err
	}
	st, err := s.settings(r.Context(), realm)
	if err != nil {
		return err
	}
	return httpx.OK(w, ToSettings(st))
}

// PutSettings answers PUT /admin/realms/{realm}/saml/settings.
func (s *Service) PutSettings(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.AdminRealm(r)
	if err != nil {
		return err
	}
	st, err := s.settings(r.Context(), realm)
	if err != nil {
		return err
	}
	u, err := httpx.ReadUpdate[Settings](r, ToSettings(st), settingsDefaults)
	if err != nil {
		return err
	}
	if err := s.deps.Store.PutSAMLSettings(r.Context(), StoreSettings(realm.ID, u)); err != nil {
		return err
	}
	return httpx.OK(w, u)
}
