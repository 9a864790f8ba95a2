package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

func errInvalidScope(name string) error {
	return oidc.ErrInvalidScope().WithDescription("scope %s is not available to this client", name)
}

// ClientCredentialsExchange: the client acts as its service-account user,
// whose roles the token carries.
func (s *oidcServer) ClientCredentialsExchange(ctx context.Context, r *op.ClientRequest[oidc.ClientCredentialsRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := signin.RealmFrom(ctx)
	client := r.Client.(*oidcClient).c
	var user *store.User
	// Every outcome is recorded; failures with their OAuth error code.
	defer func() {
		e := store.LoginEvent{Type: store.EventClientLogin, ClientID: client.ClientID}
		if user != nil {
			e.UserID = user.ID
		}
		if err != nil {
			e.Type, e.Error = store.EventClientLoginError, oauthErrorCode(err)
		}
		s.a.loginEvent(ctx, realm, e)
	}()
	if !s.a.oidcClient(realm, client).hasGrant(oidc.GrantTypeClientCredentials) {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("client_credentials is not among this client's grant types")
	}
	user, err = s.a.serviceAccountUser(ctx, client.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("client has no service account")
	} else if err != nil {
		return nil, err
	}
	if !user.Enabled {
		return nil, oidc.ErrInvalidGrant().WithDescription("the client's service account is disabled")
	}
	if use := r.Client.(*oidcClient).nhi; use != nil {
		// The use is recorded whatever the outcome, the token with it.
		defer func() {
			u := store.NHIUsage{}
			if err == nil {
				u.Tokens = 1
			}
			s.a.recordNHIUse(ctx, use, u)
		}()
		if err := checkCredentialScopes(use.cred, r.Data.Scope); err != nil {
			return nil, err
		}
	}
	scopes, err := s.a.grantScopes(ctx, realm, client, r.Data.Scope)
	if err != nil {
		return nil, err
	}
	g := &tokenGrant{realm: realm, client: client, user: user, scopes: scopes}
	if use := r.Client.(*oidcClient).nhi; use != nil {
		g.credential = use.cred.ID
	}
	token, _, exp, err := s.a.accessToken(ctx, g, nil)
	if err != nil {
		return nil, err
	}
	return op.NewResponse(&oidc.AccessTokenResponse{
		AccessToken: token, TokenType: oidc.BearerToken,
		ExpiresIn: uint64(exp.Sub(s.a.now()) / time.Second), Scope: strings.Fields(g.scopeParam()),
	}), nil
}
