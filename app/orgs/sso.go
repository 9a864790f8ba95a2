package orgs

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// SSOConnectionRep is an organization's SSO connection as the API and the
// realm export show it: Keycloak 26's link of an identity provider to an
// organization, its kc.org.* settings as fields.
type SSOConnectionRep struct {
	ID string `json:"id"`
	// IdentityProvider is the alias of one of the realm's providers.
	IdentityProvider string `json:"identityProvider"`
	Enabled          bool   `json:"enabled"`
	// Domain is one of the organization's domains, or ANY: every domain
	// the organization has verified.
	Domain                   string `json:"domain"`
	AutoJoin                 bool   `json:"autoJoin"`
	RedirectWhenEmailMatches bool   `json:"redirectWhenEmailMatches"`
	HideOnLogin              bool   `json:"hideOnLogin"`
	CreatedTimestamp         int64  `json:"createdTimestamp"`
}

// ToSSORep shows a connection.
func ToSSORep(c *store.OrgSSOConnection) SSOConnectionRep {
	return SSOConnectionRep{ID: c.ID, IdentityProvider: c.ProviderAlias, Enabled: c.Enabled, Domain: c.Domain,
		AutoJoin: c.AutoJoin, RedirectWhenEmailMatches: c.RedirectWhenEmailMatches, HideOnLogin: c.HideOnLogin,
		CreatedTimestamp: c.CreatedAt}
}

// SSOConnectionCreate is the body of POST .../sso-connections.
type SSOConnectionCreate struct {
	IdentityProvider         *string `json:"identityProvider"`
	Enabled                  *bool   `json:"enabled"`
	Domain                   *string `json:"domain"`
	AutoJoin                 bool    `json:"autoJoin"`
	RedirectWhenEmailMatches *bool   `json:"redirectWhenEmailMatches"`
	HideOnLogin              bool    `json:"hideOnLogin"`
}

// checkSSODomain normalizes a connection's domain: ANY, or one the
// organization lists.
func checkSSODomain(o *store.Organization, domain string) (string, error) {
	if domain == store.AnyVerifiedDomain {
		return domain, nil
	}
	name, err := NormalizeDomain("domain", domain)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(o.Domains, func(d store.OrgDomain) bool { return d.Name == name }) {
		return "", apperr.Field("domain", "%s is not a domain of organization %s: name one of its domains, or ANY", name, o.Slug)
	}
	return name, nil
}

// newSSOConnection checks a connection's representation against its
// organization and the provider its alias names (nil: the realm has none),
// and makes the connection to store: the checks of the admin API and of
// the realm import alike.
func newSSOConnection(o *store.Organization, rep SSOConnectionRep, p *store.IdentityProvider) (*store.OrgSSOConnection, error) {
	if rep.IdentityProvider == "" {
		return nil, apperr.Field("identityProvider", "is required: the alias of one of the realm's identity providers")
	}
	if p == nil {
		return nil, apperr.Field("identityProvider", "the realm has no identity provider %s", rep.IdentityProvider)
	}
	domain, err := checkSSODomain(o, rep.Domain)
	if err != nil {
		return nil, err
	}
	return &store.OrgSSOConnection{ID: rep.ID, OrgID: o.ID, ProviderID: p.ID, ProviderAlias: p.Alias,
		Enabled: rep.Enabled, Domain: domain, AutoJoin: rep.AutoJoin, RedirectWhenEmailMatches: rep.RedirectWhenEmailMatches,
		HideOnLogin: rep.HideOnLogin, CreatedAt: rep.CreatedTimestamp}, nil
}

// errProviderServes refuses a second connection of a provider.
func errProviderServes(field, alias, slug string, cause error) error {
	msg := "identity provider " + alias + " already serves an organization"
	if slug != "" {
		msg = "identity provider " + alias + " already serves organization " + slug
	}
	return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: field,
		Message: msg + "; a provider serves one organization", Cause: cause}
}

// ssoConnection loads the realm, the organization and the connection the
// path names.
func (s *Service) ssoConnection(r *http.Request) (*store.Realm, *store.Organization, *store.OrgSSOConnection, error) {
	realm, o, err := s.organization(r)
	if err != nil {
		return nil, nil, nil, err
	}
	id := mux.Vars(r)["connectionId"]
	c, err := s.deps.Store.GetOrgSSOConnection(r.Context(), o.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil, apperr.NotFound("sso connection " + id + " of organization " + o.Slug)
	}
	return realm, o, c, err
}

// ListSSOConnections answers GET .../sso-connections: the organization's
// connections, oldest first.
func (s *Service) ListSSOConnections(w http.ResponseWriter, r *http.Request) error {
	_, o, err := s.organization(r)
	if err != nil {
		return err
	}
	list, err := s.deps.Store.ListOrgSSOConnections(r.Context(), o.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, list, ToSSORep)
}

// CreateSSOConnection answers POST .../sso-connections: the organization's
// people sign in with one of the realm's identity providers.
func (s *Service) CreateSSOConnection(w http.ResponseWriter, r *http.Request) error {
	realm, o, err := s.organization(r)
	if err != nil {
		return err
	}
	var body SSOConnectionCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	rep := SSOConnectionRep{ID: uuid.NewString(), Enabled: body.Enabled == nil || *body.Enabled,
		Domain: store.AnyVerifiedDomain, AutoJoin: body.AutoJoin,
		RedirectWhenEmailMatches: body.RedirectWhenEmailMatches == nil || *body.RedirectWhenEmailMatches,
		HideOnLogin:              body.HideOnLogin, CreatedTimestamp: s.deps.Now().UnixMilli()}
	if body.IdentityProvider != nil {
		rep.IdentityProvider = *body.IdentityProvider
	}
	if body.Domain != nil {
		rep.Domain = *body.Domain
	}
	var p *store.IdentityProvider
	if rep.IdentityProvider != "" {
		p, err = s.deps.Store.GetIdentityProvider(r.Context(), realm.ID, rep.IdentityProvider)
		if errors.Is(err, store.ErrNotFound) {
			p = nil
		} else if err != nil {
			return err
		}
	}
	c, err := newSSOConnection(o, rep, p)
	if err != nil {
		return err
	}
	if err := s.deps.Store.CreateOrgSSOConnection(r.Context(), c); errors.Is(err, store.ErrConflict) {
		slug := ""
		if d, derr := s.deps.Store.SSOConnectionOfProvider(r.Context(), c.ProviderID); derr == nil {
			slug = d.OrgSlug
		}
		return errProviderServes("identityProvider", c.ProviderAlias, slug, err)
	} else if err != nil {
		return err
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+c.ID, ToSSORep(c))
}

// GetSSOConnection answers GET .../sso-connections/{connectionId}.
func (s *Service) GetSSOConnection(w http.ResponseWriter, r *http.Request) error {
	_, _, c, err := s.ssoConnection(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, ToSSORep(c))
}

// UpdateSSOConnection answers PUT .../sso-connections/{connectionId}. The
// body may repeat id, identityProvider and createdTimestamp but not change
// them: a connection to another provider is a new connection.
func (s *Service) UpdateSSOConnection(w http.ResponseWriter, r *http.Request) error {
	_, o, c, err := s.ssoConnection(r)
	if err != nil {
		return err
	}
	upd, err := httpx.ReadUpdate[SSOConnectionRep](r, ToSSORep(c), map[string]any{
		"id": c.ID, "identityProvider": c.ProviderAlias, "createdTimestamp": c.CreatedAt,
		"enabled": true, "domain": store.AnyVerifiedDomain, "autoJoin": false, "redirectWhenEmailMatches": true,
		"hideOnLogin": false,
	})
	if err != nil {
		return err
	}
	switch {
	case upd.ID != c.ID:
		return apperr.Field("id", "cannot be changed")
	case upd.IdentityProvider != c.ProviderAlias:
		return apperr.Field("identityProvider", "cannot be changed: delete the connection and create one for the other provider")
	case upd.CreatedTimestamp != c.CreatedAt:
		return apperr.Field("createdTimestamp", "cannot be changed")
	}
	if c.Domain, err = checkSSODomain(o, upd.Domain); err != nil {
		return err
	}
	c.Enabled, c.AutoJoin, c.RedirectWhenEmailMatches, c.HideOnLogin = upd.Enabled, upd.AutoJoin, upd.RedirectWhenEmailMatches, upd.HideOnLogin
	if err := s.deps.Store.UpdateOrgSSOConnection(r.Context(), c); err != nil {
		return err
	}
	return httpx.OK(w, ToSSORep(c))
}

// DeleteSSOConnection answers DELETE .../sso-connections/{connectionId};
// the provider stays in the realm.
func (s *Service) DeleteSSOConnection(w http.ResponseWriter, r *http.Request) error {
	_, o, c, err := s.ssoConnection(r)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteOrgSSOConnection(r.Context(), o.ID, c.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// JoinThroughConnection makes a user who signed in with a provider a
// member, with the role member, of the organization whose SSO connection
// the provider serves, when the connection is enabled and says autoJoin
// and the organization is enabled. A member already keeps their role. It
// answers the organization's slug when the user joined now, else "".
func (s *Service) JoinThroughConnection(ctx context.Context, realm *store.Realm, providerID string, u *store.User) (string, error) {
	d, err := s.deps.Store.SSOConnectionOfProvider(ctx, providerID)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if !d.Connection.Enabled || !d.Connection.AutoJoin || u.ServiceAccountClientID != "" {
		return "", nil
	}
	o, err := s.deps.Store.GetOrganization(ctx, realm.ID, d.OrgSlug)
	if err != nil {
		return "", err
	}
	if !o.Enabled {
		return "", nil
	}
	pending, err := s.join(ctx, s.deps.Store, realm, o, u, RoleMember, "sso")
	pending.Wake()
	if errors.Is(err, store.ErrConflict) {
		return "", nil // a member already
	} else if err != nil {
		return "", err
	}
	s.deps.Log.Info("user joined an organization through its sso connection", "realm", realm.Name,
		"organization", o.Slug, "user", u.ID, "identity_provider", d.Connection.ProviderAlias)
	return o.Slug, nil
}
