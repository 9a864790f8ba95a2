package app

import (
	"context"
	"errors"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Revocation (RFC 7009) revokes an access or refresh token of the calling
// client. Unknown tokens, or another client's, answer 200 too: the caller
// learns nothing about tokens that are not its own. A refresh token takes
// its grant with it (revokeRefreshGrant); an access token only itself.
func (s *oidcServer) Revocation(ctx context.Context, r *op.ClientRequest[oidc.RevocationRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := signin.RealmFrom(ctx)
	client := r.Client.(*oidcClient).c
	ok := op.NewResponse(nil)
	// Refresh tokens are opaque and looked up by hash; anything else may be
	// an access token. Both are tried, so token_type_hint is not needed
	// (RFC 7009 §2.1 lets a server ignore it).
	rt, err := s.a.store.RefreshTokenByHash(ctx, realm.ID, store.HashToken(r.Data.Token))
	switch {
	case err == nil:
		if rt.ClientID == client.ID {
			if err := s.a.revokeRefreshGrant(ctx, realm, rt); err != nil {
				return nil, err
			}
			s.a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventRevokeGrant, ClientID: client.ClientID, UserID: rt.UserID,
				SessionID: rt.SessionID, Details: map[string]string{"token_type": "refresh_token"}})
		}
		return ok, nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	claims, err := s.a.verifyAccessToken(ctx, realm, r.Data.Token)
	if err != nil || claims["azp"] != client.ClientID {
		return ok, nil
	}
	jti, _ := claims["jti"].(string)
	exp, _ := claims["exp"].(float64)
	if err := s.a.store.RevokeAccessToken(ctx, realm.ID, jti, int64(exp)*1000); err != nil {
		return nil, err
	}
	sub, _ := claims["sub"].(string)
	sid, _ := claims["sid"].(string)
	s.a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventRevokeGrant, ClientID: client.ClientID, UserID: sub,
		SessionID: sid, Details: map[string]string{"token_type": "access_token"}})
	return ok, nil
}

// revokeRefreshGrant revokes a refresh token with the grant it stands for,
// as RFC 7009 §2.1 asks ("all access tokens based on the same
// authorization grant") and Keycloak does: its family, and the client's
// session it was issued in, which ends the access tokens of that session.
// For an online token that is the client's session under the SSO session;
// the SSO session and the other clients' sessions stay. For an offline
// token it is its offline session.
func (a *App) revokeRefreshGrant(ctx context.Context, realm *store.Realm, rt *store.RefreshToken) error {
	now := a.now().UnixMilli()
	return a.store.Tx(ctx, func(tx *store.Store) error {
		if _, err := tx.RevokeRefreshFamily(ctx, realm.ID, rt.FamilyID, now); err != nil {
			return err
		}
		if rt.SessionID == "" {
			return nil
		}
		if _, err := tx.EndClientSession(ctx, realm.ID, rt.SessionID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
}
