package app

import (
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// oidcClient shows a stored client to the OpenID Connect library.
type oidcClient struct {
	c       *store.Client
	realm   *store.Realm
	baseURL string
	// nhi is the non-human identity and credential that authenticated the
	// client, if one did: an API key's scopes bound what it may ask for.
	nhi *nhiUse
}

var _ op.Client = (*oidcClient)(nil)

// GetID is the public clientId: the one clients send and tokens carry.
func (o *oidcClient) GetID() string          { return o.c.ClientID }
func (o *oidcClient) RedirectURIs() []string { return o.c.RedirectURIs }
func (o *oidcClient) PostLogoutRedirectURIs() []string {
	// Keycloak's default: the registered redirect URIs also serve logout.
	return o.c.RedirectURIs
}

func (o *oidcClient) ApplicationType() op.ApplicationType {
	if o.c.ClientType == identity.ClientPublic {
		return op.ApplicationTypeUserAgent
	}
	return op.ApplicationTypeWeb
}

// AuthMethod: confidential clients authenticate with their secret, sent by
// Basic or in the form (the library reads both); public clients send none.
func (o *oidcClient) AuthMethod() oidc.AuthMethod {
	if o.c.ClientType == identity.ClientPublic {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}

func (o *oidcClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

// GrantTypes are the client's grants, and token exchange, which is not a
// client's setting: the realm's policies decide who may exchange
// (oidc_token_exchange.go).
func (o *oidcClient) GrantTypes() []oidc.GrantType {
	out := make([]oidc.GrantType, len(o.c.GrantTypes), len(o.c.GrantTypes)+1)
	for i, g := range o.c.GrantTypes {
		out[i] = oidc.GrantType(g)
	}
	return append(out, oidc.GrantTypeTokenExchange)
}

func (o *oidcClient) hasGrant(g oidc.GrantType) bool {
	return slices.Contains(o.c.GrantTypes, string(g))
}

// LoginURL is where the authorization endpoint sends the browser.
func (o *oidcClient) LoginURL(authRequestID string) string {
	return o.baseURL + "/realms/" + o.realm.Name + "/login?authRequestID=" + authRequestID
}

func (o *oidcClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (o *oidcClient) IDTokenLifetime() time.Duration {
	return time.Duration(o.realm.AccessTokenLifespan) * time.Second
}

// DevMode stays off: it would allow http redirect URIs and globs.
func (o *oidcClient) DevMode() bool { return false }

func (o *oidcClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

func (o *oidcClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

// IsScopeAllowed admits scopes beyond the standard ones; which of them the
// client may use is decided by its scope assignments when tokens are made.
func (o *oidcClient) IsScopeAllowed(string) bool { return true }

// IDTokenUserinfoClaimsAssertion keeps profile claims out of ID tokens when
// an access token is issued too, as OpenID Connect Core §5.4 suggests; the
// scope mappers decide instead.
func (o *oidcClient) IDTokenUserinfoClaimsAssertion() bool { return false }

func (o *oidcClient) ClockSkew() time.Duration { return 0 }
