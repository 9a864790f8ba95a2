package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// The user grants (authorization code, password, refresh token) answer
// alike: an access token, an ID token for openid requests, and a refresh
// token when the client has that grant.

// userTokens is what one user grant's response is made from.
type userTokens struct {
	g       *tokenGrant
	amr     []string
	nonce   string
	refresh string // the refresh token handed out; "" for none
	// noIDToken leaves the ID token out: a refresh for a client that asked
	// for none (store.Client.OmitIDTokenOnRefresh).
	noIDToken bool
}

// tokenResponse mints the tokens of t. The access token and the ID token
// share one resolution of the claims' input.
func (a *App) tokenResponse(ctx context.Context, t *userTokens) (*op.Response, error) {
	t.g.acr = acrOf(t.amr) // acr.go: the access token carries the level too
	in, err := a.claimsInputFor(ctx, t.g)
	if err != nil {
		return nil, err
	}
	access, _, exp, err := a.accessToken(ctx, t.g, in)
	if err != nil {
		return nil, err
	}
	resp := &oidc.AccessTokenResponse{AccessToken: access, TokenType: oidc.BearerToken, RefreshToken: t.refresh,
		ExpiresIn: uint64(exp.Sub(a.now()) / time.Second), Scope: strings.Fields(t.g.scopeParam())}
	if !t.noIDToken && slices.ContainsFunc(t.g.scopes, func(sc *store.ClientScope) bool { return sc.Name == oidc.ScopeOpenID }) {
		if resp.IDToken, err = a.idToken(ctx, t.g, in, access, t.nonce, t.amr); err != nil {
			return nil, err
		}
	}
	// Not cached: the token endpoint marks every answer (setNoStore).
	return op.NewResponse(resp), nil
}

// clientGrant is what a code redemption or a password grant writes beside
// its tokens: the client's OAuth session under the SSO session (reused if
// the client has one), an offline session for an offline token, and the
// first refresh token of a new family when the client has that grant.
type clientGrant struct {
	oauth   *store.Session // nil when the client's session is reused
	offline *store.Session
	refresh *store.RefreshToken
	token   string // the refresh token itself
}

// planClientGrant prepares the rows of a grant to client in SSO session
// sso, for the scopes granted, at now (Unix milliseconds). oauth is the
// client's session under sso to reuse; nil makes a new one.
func planClientGrant(realm *store.Realm, client *store.Client, sso, oauth *store.Session, scopes []string, now int64) *clientGrant {
	p := &clientGrant{}
	if oauth == nil {
		// It ends with the SSO session, at the latest at its maximum age.
		p.oauth = &store.Session{ID: uuid.NewString(), RealmID: realm.ID, UserID: sso.UserID, Kind: store.SessionOAuth,
			ParentID: sso.ID, ClientID: client.ID, IPAddress: sso.IPAddress, StartedAt: now, LastAccessAt: now,
			ExpiresAt: ssoMaxEnd(sso), AuthTime: sso.AuthTime, AMR: sso.AMR}
		oauth = p.oauth
	}
	if !slices.Contains(client.GrantTypes, identity.GrantRefreshToken) {
		return p
	}
	p.token = randomToken()
	p.refresh = &store.RefreshToken{ID: uuid.NewString(), RealmID: realm.ID, TokenHash: store.HashToken(p.token),
		SessionID: oauth.ID, ClientID: client.ID, UserID: sso.UserID, Scopes: scopes, AuthTime: sso.AuthTime,
		AMR: sso.AMR, CreatedAt: now, ExpiresAt: ssoExpiry(realm, sso, now)}
	// An impersonation's tokens end with its session: its grants hold no
	// offline token, whose session would outlive it.
	if slices.Contains(scopes, oidc.ScopeOfflineAccess) && sso.Impersonator == nil {
		// Offline tokens live in a session of their own, without parent, so
		// that signing out of the SSO session leaves them.
		exp := now + int64(realm.OfflineTokenLifespan)*1000
		p.offline = &store.Session{ID: uuid.NewString(), RealmID: realm.ID, UserID: sso.UserID, Kind: store.SessionOAuth,
			ClientID: client.ID, IPAddress: sso.IPAddress, StartedAt: now, LastAccessAt: now, ExpiresAt: exp,
			AuthTime: sso.AuthTime, AMR: sso.AMR, Offline: true}
		p.refresh.SessionID, p.refresh.Offline, p.refresh.ExpiresAt = p.offline.ID, true, exp
	}
	return p
}

// familyID is the refresh-token family the grant starts; "" for none.
func (p *clientGrant) familyID() string {
	if p.refresh == nil {
		return ""
	}
	return p.refresh.ID
}

// write stores the grant's rows, inside the caller's transaction.
func (p *clientGrant) write(ctx context.Context, tx *store.Store) error {
	for _, s := range []*store.Session{p.oauth, p.offline} {
		if s != nil {
			if err := tx.CreateSession(ctx, s); err != nil {
				return err
			}
		}
	}
	if p.refresh != nil {
		return tx.CreateRefreshToken(ctx, p.refresh)
	}
	return nil
}
