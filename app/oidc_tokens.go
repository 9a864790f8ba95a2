package app

import (
	"context"
	"crypto/rsa"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/groups"
	"github.com/idenplane/idenplane/app/plugins"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/store"
)

// tokenGrant is everything one token response is made from.
type tokenGrant struct {
	realm    *store.Realm
	client   *store.Client
	user     *store.User
	scopes   []*store.ClientScope // the scopes applied: the client's defaults and the optional ones asked for
	sid      string               // SSO session, empty for client credentials
	authTime time.Time
	jti      string // the access token's ID when it must be known beforehand; random if empty
	acr      string // the level the user authenticated at (acr.go); "" for client credentials
	// credential is the identity's credential the token is obtained with
	// (oidc_nhi.go); "" for none.
	credential string
	// org is the organization the sign-in settled on for the organization
	// claim (org_select.go); not made, the claim holds every membership.
	org store.OrgChoice
	// actor is the administrator acting as the user in an impersonation's
	// session: the tokens name them in act (RFC 8693 §4.1); nil for none.
	actor *store.Impersonator
	// act is a token exchange's act claim (oidc_token_exchange.go), which
	// stands in for actor's; nil for none.
	act map[string]any
	// audience is a token exchange's audiences, the access token's aud
	// whatever the mappers say; none: the mappers', or the client.
	audience []string
}

// actClaim is the act claim of the tokens of an impersonation's session.
func actClaim(m *store.Impersonator) map[string]any {
	return map[string]any{"sub": m.ID, "preferred_username": m.Username}
}

// scopeParam is the granted scopes as the token's scope claim lists them.
func (g *tokenGrant) scopeParam() string {
	names := make([]string, len(g.scopes))
	for i, sc := range g.scopes {
		names[i] = sc.Name
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// grantScopes resolves the scopes a request asks for against the client's
// assignments: defaults always apply, optional ones when asked for; asking
// for a scope the client does not have is invalid_scope.
func (a *App) grantScopes(ctx context.Context, realm *store.Realm, c *store.Client, requested []string) ([]*store.ClientScope, error) {
	defaults, err := a.linkedScopes(ctx, realm.ID, c.ID, store.ScopeDefault)
	if err != nil {
		return nil, err
	}
	optional, err := a.linkedScopes(ctx, realm.ID, c.ID, store.ScopeOptional)
	if err != nil {
		return nil, err
	}
	out := defaults
	for _, name := range requested {
		if name == "" || slices.ContainsFunc(out, func(sc *store.ClientScope) bool { return sc.Name == name }) {
			continue
		}
		i := slices.IndexFunc(optional, func(sc *store.ClientScope) bool { return sc.Name == name })
		if i < 0 {
			return nil, errInvalidScope(name)
		}
		out = append(out, optional[i])
	}
	return out, nil
}

// claimsFor resolves what the mappers need and runs them for one token.
func (a *App) claimsFor(ctx context.Context, g *tokenGrant, kind scopes.TokenKind) (map[string]any, error) {
	in, err := a.claimsInputFor(ctx, g)
	if err != nil {
		return nil, err
	}
	return in.build(kind), nil
}

// claimsInputFor resolves what the mappers need: effective roles, groups,
// organizations and attributes. A grant's access and ID token share it.
func (a *App) claimsInputFor(ctx context.Context, g *tokenGrant) (*claimsInput, error) {
	roles, err := a.effectiveRoles(ctx, g.user.ID)
	if err != nil {
		return nil, err
	}
	in := &claimsInput{ClientID: g.client.ClientID, WebOrigins: g.client.WebOrigins, Scopes: g.scopes,
		mappers: orderedMappers(g.scopes), ClientRoles: map[string][]string{},
		User: claimUser{ID: g.user.ID, Username: g.user.Username, Email: g.user.Email, EmailVerified: g.user.EmailVerified,
			FirstName: g.user.FirstName, LastName: g.user.LastName, CreatedTimestamp: g.user.CreatedAt}}
	for _, u := range g.client.RedirectURIs {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			in.RedirectOrigins = append(in.RedirectOrigins, p.Scheme+"://"+p.Host)
		}
	}
	for _, r := range roles {
		if r.ClientID == "" {
			in.RealmRoles = append(in.RealmRoles, r.Name)
		} else {
			in.ClientRoles[r.ClientClientID] = append(in.ClientRoles[r.ClientClientID], r.Name)
		}
	}
	if in.GroupPaths, err = a.userGroupPaths(ctx, g.realm.ID, g.user.ID); err != nil {
		return nil, err
	}
	if in.Organizations, err = a.claimOrganizations(ctx, g); err != nil {
		return nil, err
	}
	if in.CustomAttributes, err = a.claimCustomAttributes(ctx, g); err != nil {
		return nil, err
	}
	return in, nil
}

// accessToken mints a JWT access token (RFC 9068: typ at+jwt) and returns
// it with its jti and expiry. in is the grant's claims input; nil
// resolves it.
func (a *App) accessToken(ctx context.Context, g *tokenGrant, in *claimsInput) (token, jti string, exp time.Time, err error) {
	if in == nil {
		if in, err = a.claimsInputFor(ctx, g); err != nil {
			return "", "", time.Time{}, err
		}
	}
	claims := in.build(scopes.AccessToken)
	now := a.now()
	exp = now.Add(time.Duration(g.realm.AccessTokenLifespan) * time.Second)
	jti = g.jti
	if jti == "" {
		jti = uuid.NewString()
	}
	std := map[string]any{
		"iss": a.issuer(g.realm), "sub": g.user.ID, "azp": g.client.ClientID, "exp": exp.Unix(), "iat": now.Unix(),
		"jti": jti, "scope": g.scopeParam(), "typ": "Bearer", "client_id": g.client.ClientID,
	}
	if g.sid != "" {
		std["sid"] = g.sid
	}
	if !g.authTime.IsZero() {
		std["auth_time"] = g.authTime.Unix()
	}
	if g.actor != nil {
		std["act"] = actClaim(g.actor)
	}
	if g.act != nil {
		std["act"] = g.act
	}
	if g.acr != "" {
		std["acr"] = g.acr
	}
	// Only the grant names the credential that the token stands by
	// (token_standing.go), never a mapper.
	delete(claims, credentialClaim)
	if g.credential != "" {
		std[credentialClaim] = g.credential
	}
	if _, ok := claims["aud"]; !ok {
		// Without audience mappers the token is for the client itself.
		std["aud"] = g.client.ClientID
	}
	switch len(g.audience) {
	case 0:
	case 1:
		std["aud"] = g.audience[0]
	default:
		std["aud"] = g.audience
	}
	for k, v := range std {
		claims[k] = v
	}
	addPluginClaims(ctx, a.plugins, g, in, plugins.AccessToken, claims)
	token, err = a.sign(ctx, g.realm, "at+jwt", claims)
	return token, jti, exp, err
}

// sign signs claims with the realm's active key.
func (a *App) sign(ctx context.Context, realm *store.Realm, typ string, claims map[string]any) (string, error) {
	key, err := a.signingKeys.Active(ctx, realm)
	if err != nil {
		return "", err
	}
	return a.signWith(key, typ, claims)
}

// signWith signs claims with key, for a token whose claims depend on the
// key's algorithm (at_hash).
//
// At most as many RSA signatures as there are cores run at once; the
// others wait, not runnable. An RSA signature is a millisecond of CPU that
// never blocks, and with one per request runnable the scheduler's queue
// grew so long that the goroutine committing the refresh rotations, which
// every refresh waits for, waited there tens of milliseconds after each
// disk write: the cores idled while the requests waited on the commit.
// ECDSA and EdDSA signatures take tens of microseconds: waiting would cost
// them more than it saves.
func (a *App) signWith(key *signingkeys.Key, typ string, claims map[string]any) (string, error) {
	if _, isRSA := key.Key.(*rsa.PrivateKey); isRSA {
		a.signSlots <- struct{}{}
		defer func() { <-a.signSlots }()
	}
	payload, err := marshalClaims(claims)
	if err != nil {
		return "", fmt.Errorf("claims of a %s token: %w", typ, err)
	}
	return key.Sign(typ, payload)
}

// groupPaths names a user's groups by path, from one ancestry query.
func groupPaths(ctx context.Context, st *store.Store, realmID string, of []*store.Group) ([]string, error) {
	ids := make([]string, len(of))
	for i, g := range of {
		ids[i] = g.ID
	}
	family, err := st.GroupAncestry(ctx, realmID, ids...)
	if err != nil {
		return nil, err
	}
	byID := groups.Paths(family)
	paths := make([]string, len(of))
	for i, g := range of {
		paths[i] = byID[g.ID]
	}
	return paths, nil
}
