package app

import (
	"context"
	"errors"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// CodeExchange redeems an authorization code. The library has already
// authenticated the client and checked that it has the grant. A code
// serves once: presenting it again revokes what it was redeemed for.
func (s *oidcServer) CodeExchange(ctx context.Context, r *op.ClientRequest[oidc.AccessTokenRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	a, realm, client := s.a, signin.RealmFrom(ctx), r.Client.(*oidcClient).c
	event := store.LoginEvent{Type: store.EventCodeToToken, ClientID: client.ClientID}
	defer func() { s.a.grantEvent(ctx, realm, event, err) }()
	ar, err := a.store.AuthRequestByCode(ctx, realm.ID, store.HashToken(r.Data.Code))
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrInvalidGrant().WithDescription("invalid authorization code")
	} else if err != nil {
		return nil, err
	}
	now := a.now()
	switch {
	case ar.CodeUsedAt != 0:
		if err := a.store.RevokeAuthCodeGrant(ctx, realm.ID, ar.ID, now.UnixMilli()); err != nil {
			return nil, err
		}
		return nil, errCodeReused()
	case !ar.Done || ar.ExpiresAt <= now.UnixMilli():
		return nil, oidc.ErrInvalidGrant().WithDescription("authorization code expired")
	}
	if refused := checkCodeRedemption(ar, client, r.Data); refused != nil {
		// A code that failed its checks is used up, as in Keycloak: whoever
		// tries again, with the right values or not, gets invalid_grant,
		// so a stolen code cannot be tried against guessed values.
		return nil, a.spendAuthCode(ctx, realm, ar, refused)
	}
	user, err := a.store.GetUser(ctx, realm.ID, ar.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrInvalidGrant().WithDescription("the user no longer exists")
	} else if err != nil {
		return nil, err
	}
	if !user.Enabled {
		return nil, oidc.ErrInvalidGrant().WithDescription("the user is disabled")
	}
	sso, err := a.store.GetSession(ctx, realm.ID, ar.SessionID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !sso.Active(now.UnixMilli())) {
		return nil, oidc.ErrInvalidGrant().WithDescription("the session ended")
	} else if err != nil {
		return nil, err
	}
	scopes, err := a.grantScopes(ctx, realm, client, ar.Scopes)
	if err != nil {
		return nil, err
	}
	oauth, err := a.store.ClientSessionOf(ctx, sso, client.ID, now.UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		oauth = nil
	} else if err != nil {
		return nil, err
	}
	plan := planClientGrant(realm, client, sso, oauth, scopeNames(scopes), now.UnixMilli())
	if plan.refresh != nil {
		plan.refresh.Org = ar.Org // the refresh tokens keep the sign-in's organization
	}
	// The access token's jti is the request's ID, so a replay can revoke it;
	// the request is kept until that token expires.
	keepUntil := now.Add(time.Duration(realm.AccessTokenLifespan) * time.Second).UnixMilli()
	reused := false
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		err := tx.RedeemAuthCode(ctx, realm.ID, ar.ID, plan.familyID(), now.UnixMilli(), keepUntil)
		if errors.Is(err, store.ErrCodeReused) {
			reused = true // redeemed meanwhile; commit the revocation
			return nil
		} else if err != nil {
			return err
		}
		return plan.write(ctx, tx)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, oidc.ErrInvalidGrant().WithDescription("authorization code expired")
	case err != nil:
		return nil, err
	case reused:
		return nil, errCodeReused()
	}
	event.UserID, event.SessionID = user.ID, sso.ID
	return a.tokenResponse(ctx, &userTokens{
		g: &tokenGrant{realm: realm, client: client, user: user, scopes: scopes, sid: sso.ID,
			authTime: time.UnixMilli(ar.AuthTime), jti: ar.ID, org: ar.Org, actor: sso.Impersonator},
		amr: ar.AMR, nonce: ar.Nonce, refresh: plan.token,
	})
}

// checkCodeRedemption checks what a redemption must match of the
// authorization request: the client, the redirect URI and the PKCE
// verifier. The verifier is checked whenever the request had a challenge,
// confidential clients included: the library's own exchange skips it
// without a verifier.
func checkCodeRedemption(ar *store.AuthRequest, client *store.Client, req *oidc.AccessTokenRequest) *oidc.Error {
	switch {
	case ar.ClientID != client.ID:
		return oidc.ErrInvalidGrant().WithDescription("the authorization code was issued to another client")
	case req.RedirectURI != ar.RedirectURI:
		return oidc.ErrInvalidGrant().WithDescription("redirect_uri differs from the authorization request's")
	}
	return checkPKCEVerifier(ar, req.CodeVerifier)
}

// spendAuthCode uses up the code of ar without issuing anything, and
// returns refused, the reason. A code redeemed meanwhile is a replay: its
// tokens are revoked, as for any second use.
func (a *App) spendAuthCode(ctx context.Context, realm *store.Realm, ar *store.AuthRequest, refused *oidc.Error) error {
	err := a.store.RedeemAuthCode(ctx, realm.ID, ar.ID, "", a.now().UnixMilli(), ar.ExpiresAt)
	switch {
	case errors.Is(err, store.ErrCodeReused):
		return errCodeReused()
	case errors.Is(err, store.ErrNotFound):
		return oidc.ErrInvalidGrant().WithDescription("authorization code expired")
	case err != nil:
		return err
	}
	return refused
}

func errCodeReused() error {
	return oidc.ErrInvalidGrant().WithDescription("authorization code already used; the tokens issued for it are revoked")
}
