package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

var signingAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

// errTokenEnded: an access token whose signature and expiry hold, but that
// was revoked, or whose session, user or client has ended since.
var errTokenEnded = errors.New("access token revoked, or its session, user or client ended")

// verifyAccessToken checks that token is an access token this realm issued
// and that it still stands, and returns its claims.
func (a *App) verifyAccessToken(ctx context.Context, realm *store.Realm, token string) (map[string]any, error) {
	parsed, err := jwt.ParseSigned(token, signingAlgorithms)
	if err != nil {
		return nil, err
	}
	if len(parsed.Headers) != 1 || parsed.Headers[0].ExtraHeaders[jose.HeaderType] != "at+jwt" {
		return nil, errors.New("not an access token")
	}
	keys, err := a.signingKeys.Public(ctx, realm)
	if err != nil {
		return nil, err
	}
	kid := parsed.Headers[0].KeyID
	for _, k := range keys {
		if k.KeyID != kid {
			continue
		}
		var claims map[string]any
		var std jwt.Claims
		if err := parsed.Claims(k.Key, &claims, &std); err != nil {
			return nil, err
		}
		if err := std.ValidateWithLeeway(jwt.Expected{Issuer: a.issuer(realm), Time: a.now()}, 0); err != nil {
			return nil, err
		}
		stands, err := a.accessTokenStands(ctx, realm, claims, &std)
		if err != nil {
			return nil, err
		}
		if !stands {
			return nil, errTokenEnded
		}
		return claims, nil
	}
	return nil, fmt.Errorf("unknown key %q", kid)
}

// Introspect (RFC 7662) answers for tokens of this realm to an
// authenticated confidential client: access tokens of any of its clients,
// refresh tokens of the caller's own. Anything invalid is just inactive.
func (s *oidcServer) Introspect(ctx context.Context, r *op.Request[op.IntrospectionRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	realm := signin.RealmFrom(ctx)
	var id, secret string
	if r.Data.ClientCredentials != nil {
		id, secret = r.Data.ClientID, r.Data.ClientSecret
	}
	c, err := s.a.authenticateClient(ctx, realm, id, secret)
	if err != nil {
		return nil, err
	}
	if c.ClientType == identity.ClientPublic {
		return nil, oidc.ErrInvalidClient().WithDescription("public clients may not introspect tokens")
	}
	inactive := op.NewResponse(map[string]any{"active": false})
	if r.Data.IntrospectionRequest == nil || r.Data.Token == "" {
		return inactive, nil
	}
	if identity.APIKeyPrefix(r.Data.Token) != "" { // an identity's API key, as an opaque bearer token
		out, err := s.a.introspectAPIKey(ctx, realm, c, r.Data.Token)
		switch {
		case err != nil:
			return nil, err
		case out == nil:
			s.a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventIntrospectTokenError, ClientID: c.ClientID, Error: "invalid_token"})
			return inactive, nil
		}
		return op.NewResponse(out), nil
	}
	if strings.Count(r.Data.Token, ".") != 2 { // not a JWS: a refresh token, if anything
		out, err := s.a.introspectRefreshToken(ctx, realm, c, r.Data.Token)
		switch {
		case err != nil:
			return nil, err
		case out == nil:
			s.a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventIntrospectTokenError, ClientID: c.ClientID, Error: "invalid_token"})
			return inactive, nil
		}
		return op.NewResponse(out), nil
	}
	claims, err := s.a.verifyAccessToken(ctx, realm, r.Data.Token)
	if err != nil {
		s.a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventIntrospectTokenError, ClientID: c.ClientID, Error: "invalid_token"})
		return inactive, nil
	}
	sub, _ := claims["sub"].(string)
	sid, _ := claims["sid"].(string)
	s.a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventIntrospectToken, ClientID: c.ClientID, UserID: sub, SessionID: sid})
	claims["active"] = true
	claims["token_type"] = "Bearer"
	return op.NewResponse(claims), nil
}

// introspectRefreshToken answers for a live refresh token of client c,
// with its details as Keycloak gives them; nil for anything else: unknown,
// rotated, revoked, expired, its session or user ended, or another
// client's (a refresh token is its client's alone, RFC 6749 §10.4, so
// another client learns nothing of it).
func (a *App) introspectRefreshToken(ctx context.Context, realm *store.Realm, c *store.Client, token string) (map[string]any, error) {
	grant, err := a.store.RefreshGrantByHash(ctx, realm.ID, store.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	rt, user, now := grant.Token, grant.User, a.now().UnixMilli()
	if rt.ClientID != c.ID || !rt.Live(now) || !user.Enabled {
		return nil, nil
	}
	sess, err := refreshSession(realm, grant, now)
	var ended *oidc.Error
	if errors.As(err, &ended) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	typ := "Refresh"
	if rt.Offline {
		typ = "Offline"
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventIntrospectToken, ClientID: c.ClientID, UserID: user.ID,
		SessionID: sess.sid, Details: map[string]string{"token_type": "refresh_token"}})
	return map[string]any{
		"active": true, "token_type": "Refresh", "typ": typ, "iss": a.issuer(realm), "sub": user.ID,
		"username": user.Username, "client_id": c.ClientID, "azp": c.ClientID, "scope": strings.Join(slices.Sorted(slices.Values(rt.Scopes)), " "),
		"iat": rt.CreatedAt / 1000, "exp": rt.ExpiresAt / 1000, "sid": sess.sid,
	}, nil
}
