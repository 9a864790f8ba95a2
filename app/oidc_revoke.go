package app

import (
	"context"
	"errors"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/store"
)

// Revocation (RFC 7009) revokes an access or refresh token of the calling
// client. Unknown tokens, or another client's, answer 200 too: the caller
// learns nothing about tokens that are not its own.
func (s *oidcServer) Revocation(ctx context.Context, r *op.ClientRequest[oidc.RevocationRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := realmFrom(ctx)
	client := r.Client.(*oidcClient).c
	ok := op.NewResponse(nil)
	// Refresh tokens are opaque and looked up by hash; anything else may be
	// an access token. Both are tried, so token_type_hint is not needed
	// (RFC 7009 §2.1 lets a server ignore it).
	rt, err := s.a.store.RefreshTokenByHash(ctx, realm.ID, store.HashToken(r.Data.Token))
	switch {
	case err == nil:
		if rt.ClientID == client.ID {
			if _, err := s.a.store.RevokeRefreshFamily(ctx, realm.ID, rt.FamilyID, s.a.now().UnixMilli()); err != nil {
				return nil, err
			}
			s.a.loginEvent(ctx, realm, store.LoginEvent{Type: "REVOKE_GRANT", ClientID: client.ClientID, UserID: rt.UserID,
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
	s.a.loginEvent(ctx, realm, store.LoginEvent{Type: "REVOKE_GRANT", ClientID: client.ClientID, UserID: sub,
		SessionID: sid, Details: map[string]string{"token_type": "access_token"}})
	return ok, nil
}
