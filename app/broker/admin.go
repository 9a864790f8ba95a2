package broker

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The admin API of identity providers: /admin/realms/{realm}/identity-providers
// and .../{alias}, as the spec names them.

// ProviderCreate is the body of a create, and an imported provider: every
// field of the representation an administrator sets.
type ProviderCreate struct {
	Alias            string       `json:"alias"`
	DisplayName      string       `json:"displayName"`
	ProviderType     string       `json:"providerType"`
	Enabled          *bool        `json:"enabled"`
	ClientID         string       `json:"clientId"`
	ClientSecret     string       `json:"clientSecret"`
	AuthorizationURL string       `json:"authorizationUrl"`
	TokenURL         string       `json:"tokenUrl"`
	UserinfoURL      string       `json:"userinfoUrl"`
	JWKSURL          string       `json:"jwksUrl"`
	Issuer           string       `json:"issuer"`
	DefaultScopes    string       `json:"defaultScopes"`
	TrustEmail       bool         `json:"trustEmail"`
	SyncUserProfile  bool         `json:"syncUserProfile"`
	Tenant           string       `json:"tenant"`
	StoreToken       bool         `json:"storeToken"`
	ClaimMapping     ClaimMapping `json:"claimMapping"`
	LogoutURL        string       `json:"logoutUrl"`
	UpstreamLogout   bool         `json:"upstreamLogout"`
}

func (in *ProviderCreate) rep() ProviderRep {
	enabled := in.Enabled == nil || *in.Enabled
	return ProviderRep{Alias: in.Alias, DisplayName: in.DisplayName, ProviderType: in.ProviderType, Enabled: enabled,
		ClientID: in.ClientID, ClientSecret: in.ClientSecret, AuthorizationURL: in.AuthorizationURL, TokenURL: in.TokenURL,
		UserinfoURL: in.UserinfoURL, JWKSURL: in.JWKSURL, Issuer: in.Issuer, DefaultScopes: in.DefaultScopes,
		TrustEmail: in.TrustEmail, SyncUserProfile: in.SyncUserProfile, Tenant: in.Tenant, StoreToken: in.StoreToken,
		ClaimMapping: in.ClaimMapping, LogoutURL: in.LogoutURL, UpstreamLogout: in.UpstreamLogout}
}

// prepare fills what the preset and the issuer's discovery give, then
// validates: the one path of a provider into the store, for the API and
// for imports (which pass discover false: an import fetches nothing, and
// may carry a provider without its secret).
func (s *Service) prepare(r *http.Request, p *store.IdentityProvider, discover bool) (*DiscoveryNote, error) {
	st, err := readSettings(p)
	if err != nil {
		return nil, err
	}
	fillPreset(p, st.Tenant)
	var note *DiscoveryNote
	if discover {
		// The issuer first: discovery would otherwise be refused by the
		// dialer, with a less helpful message.
		if err := httpx.CheckOutboundURL(r.Context(), "issuer", p.Issuer, s.deps.OutboundAllowed); err != nil {
			return nil, err
		}
		if note, err = s.discover(r.Context(), p); err != nil {
			return nil, err
		}
	}
	if err := validateProvider(p, discover); err != nil {
		return nil, err
	}
	return note, CheckOutbound(r.Context(), p, s.deps.OutboundAllowed)
}

// CheckOutbound refuses a provider whose endpoints the server calls (its
// issuer's discovery, token, userinfo, keys) are, or resolve to, a
// non-public address that allowed does not hold. The sign-in and sign-out
// pages are the browser's to reach, and are not checked.
func CheckOutbound(ctx context.Context, p *store.IdentityProvider, allowed []netip.Prefix) error {
	for _, u := range []struct{ field, value string }{
		{"issuer", p.Issuer}, {"tokenUrl", p.TokenURL}, {"userinfoUrl", p.UserinfoURL}, {"jwksUrl", p.JWKSURL},
	} {
		if err := httpx.CheckOutboundURL(ctx, u.field, u.value, allowed); err != nil {
			return err
		}
	}
	return nil
}

func aliasConflict(err error, alias string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "alias",
			Message: "an identity provider with alias " + alias + " already exists in this realm", Cause: err}
	}
	return err
}

// CreateProvider adds a provider. For oidc, an issuer alone is enough: the
// endpoints come from its discovery document, and the answer says which.
func (s *Service) CreateProvider(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var in ProviderCreate
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	switch {
	case in.Alias == "":
		return apperr.Field("alias", "is required")
	case in.ProviderType == "":
		return apperr.Field("providerType", "is required")
	case in.ClientSecret == Redacted:
		return apperr.Field("clientSecret", "must be the secret itself")
	}
	p := &store.IdentityProvider{ID: uuid.NewString(), RealmID: realm.ID, CreatedAt: s.deps.Now().UnixMilli()}
	rep := in.rep()
	rep.apply(p)
	note, err := s.prepare(r, p, true)
	if err != nil {
		return err
	}
	if err := s.deps.Store.CreateIdentityProvider(r.Context(), p); err != nil {
		return aliasConflict(err, p.Alias)
	}
	out, err := toRep(p, secretRedacted)
	if err != nil {
		return err
	}
	out.Discovery = note
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+p.Alias, out)
}

// ListProviders lists a realm's providers by alias.
func (s *Service) ListProviders(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	list, err := s.deps.Store.ListIdentityProviders(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	reps := make([]ProviderRep, 0, len(list))
	for _, p := range list {
		rep, err := toRep(p, secretRedacted)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	return httpx.OK(w, reps)
}

// provider loads the provider the path's {alias} names.
func (s *Service) provider(r *http.Request) (*store.Realm, *store.IdentityProvider, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := httpx.ChildOf(r, realm.ID, "alias", "identity provider", s.deps.Store.GetIdentityProvider)
	return realm, p, err
}

// GetProvider answers one provider, its secret redacted.
func (s *Service) GetProvider(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.provider(r)
	if err != nil {
		return err
	}
	rep, err := toRep(p, secretRedacted)
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}

// updateDefaults names the fields an update may change and what null
// resets each to: the create defaults. alias and providerType may be sent
// (a representation read back) but not changed.
func updateDefaults() map[string]any {
	return map[string]any{
		"alias": nil, "providerType": nil, "displayName": nil, "enabled": true, "clientId": nil, "clientSecret": nil,
		"authorizationUrl": nil, "tokenUrl": nil, "userinfoUrl": nil, "jwksUrl": nil, "issuer": nil,
		"defaultScopes": nil, "trustEmail": false, "syncUserProfile": false, "tenant": nil, "storeToken": false,
		"claimMapping": nil, "logoutUrl": nil, "upstreamLogout": false,
	}
}

// UpdateProvider answers PUT: each field the body names is replaced; a
// Redacted clientSecret keeps the stored one. Endpoints set to null or ""
// are filled again from the preset or the issuer's discovery.
func (s *Service) UpdateProvider(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.provider(r)
	if err != nil {
		return err
	}
	current, err := toRep(p, secretRedacted)
	if err != nil {
		return err
	}
	in, err := httpx.ReadUpdate[ProviderCreate](r, current, updateDefaults())
	if err != nil {
		return err
	}
	u := in.rep()
	if u.Alias != p.Alias {
		return apperr.Field("alias", "cannot be changed: delete the provider and create it again")
	}
	if u.ProviderType != p.ProviderType {
		return apperr.Field("providerType", "cannot be changed: delete the provider and create it again")
	}
	u.apply(p)
	note, err := s.prepare(r, p, true)
	if err != nil {
		return err
	}
	if err := s.deps.Store.UpdateIdentityProvider(r.Context(), p); err != nil {
		return err
	}
	out, err := toRep(p, secretRedacted)
	if err != nil {
		return err
	}
	out.Discovery = note
	return httpx.OK(w, out)
}

// DeleteProvider removes a provider and answers it, as the spec's table
// says ("deleted provider"); its users lose their links to it (their
// accounts stay). One that an authentication flow names stays: 409.
func (s *Service) DeleteProvider(w http.ResponseWriter, r *http.Request) error {
	realm, p, err := s.provider(r)
	if err != nil {
		return err
	}
	rep, err := toRep(p, secretRedacted)
	if err != nil {
		return err
	}
	ctx := r.Context()
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		naming, err := flowsNaming(ctx, tx, realm.ID, p.Alias)
		if err != nil {
			return err
		}
		if len(naming) > 0 {
			return apperr.Conflict("", "identity provider %s is named by the authentication flows %s; change them first",
				p.Alias, strings.Join(naming, ", "))
		}
		return tx.DeleteIdentityProvider(ctx, realm.ID, p.ID)
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, rep)
}
