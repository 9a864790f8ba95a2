package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/policies"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// The token exchange grant (RFC 8693): a client trades a subject token
// (an access token of the realm) for an access token for other
// audiences, with fewer scopes, or naming an actor (delegation: the act
// claim, nested for chains). Whether it may is the realm's policies'
// (app/policies, resource type token-exchange); here are the protocol,
// the tokens and the session the new token lives in.

// TokenExchange is the library's entry for the grant.
func (s *oidcServer) TokenExchange(ctx context.Context, r *op.ClientRequest[oidc.TokenExchangeRequest]) (_ *op.Response, err error) {
	defer func() { err = s.a.protocolError(ctx, err) }()
	return tokenExchange(s.a, ctx, r.Client.(*oidcClient).c, r.Data)
}

// exchangeTokenTypes are the token types a subject or actor token may
// be: an access token of the realm, which is a JWT.
var exchangeTokenTypes = []oidc.TokenType{oidc.AccessTokenType, oidc.JWTTokenType}

func tokenExchange(a *App, ctx context.Context, client *store.Client, req *oidc.TokenExchangeRequest) (_ *op.Response, err error) {
	realm := signin.RealmFrom(ctx)
	event := store.LoginEvent{Type: store.EventTokenExchange, ClientID: client.ClientID,
		Details: map[string]string{"grant_type": string(oidc.GrantTypeTokenExchange)}}
	defer func() { a.grantEvent(ctx, realm, event, err) }()
	switch {
	case client.ClientType == identity.ClientPublic:
		return nil, oidc.ErrUnauthorizedClient().WithDescription("a public client may not exchange tokens")
	case realm.ID == a.systemRealmID:
		// The administrators' realm: its tokens open the admin API.
		return nil, oidc.ErrUnauthorizedClient().WithDescription("the system realm exchanges no tokens")
	}
	switch {
	case !slices.Contains(exchangeTokenTypes, req.SubjectTokenType):
		return nil, oidc.ErrInvalidRequest().WithDescription("subject_token_type must be %s", oidc.AccessTokenType)
	case req.ActorToken != "" && !slices.Contains(exchangeTokenTypes, req.ActorTokenType):
		return nil, oidc.ErrInvalidRequest().WithDescription("actor_token_type must be %s", oidc.AccessTokenType)
	case req.ActorToken == "" && req.ActorTokenType != "":
		return nil, oidc.ErrInvalidRequest().WithDescription("actor_token_type without actor_token")
	case req.RequestedTokenType != "" && !slices.Contains(exchangeTokenTypes, req.RequestedTokenType):
		return nil, oidc.ErrInvalidRequest().WithDescription("requested_token_type must be %s: no other is issued", oidc.AccessTokenType)
	}
	subject, err := a.verifyAccessToken(ctx, realm, req.SubjectToken)
	if err != nil {
		return nil, oidc.ErrInvalidRequest().WithDescription("subject_token is not a live access token of this realm")
	}
	sub, _ := subject["sub"].(string)
	sid, _ := subject["sid"].(string)
	subjectClient, _ := subject["azp"].(string)
	event.UserID, event.SessionID = sub, sid
	event.Details["subject_client"] = subjectClient
	var actor map[string]any
	if req.ActorToken != "" {
		if actor, err = a.verifyAccessToken(ctx, realm, req.ActorToken); err != nil {
			return nil, oidc.ErrInvalidRequest().WithDescription("actor_token is not a live access token of this realm")
		}
		event.Details["actor"], _ = actor["sub"].(string)
		event.Details["actor_client"], _ = actor["azp"].(string)
	}
	user, err := a.store.GetUser(ctx, realm.ID, sub)
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrInvalidRequest().WithDescription("subject_token is not a live access token of this realm")
	} else if err != nil {
		return nil, err
	}
	audiences, err := exchangeAudiences(a, ctx, realm, req)
	if err != nil {
		return nil, err
	}
	scopes, err := exchangeScopes(a, ctx, realm, subject, req.Scopes)
	if err != nil {
		return nil, err
	}
	names := scopeNames(scopes)
	event.Details["audience"], event.Details["scope"] = strings.Join(audiences, " "), strings.Join(names, " ")
	x := policies.Exchange{Client: client.ClientID, SubjectUserID: user.ID, SubjectClient: subjectClient, Audiences: audiences,
		Scopes: names, Delegation: actor != nil}
	if actor != nil {
		x.Actor, x.ActorClient = event.Details["actor"], event.Details["actor_client"]
	}
	ip, _ := ctx.Value(clientIPCtxKey{}).(string)
	refused, err := a.policies.DecideExchange(ctx, realm, x, policies.Facts{Now: a.now(), ClientAddress: ip})
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, exchangeRefusal(refused)
	}
	g := &tokenGrant{realm: realm, client: client, user: user, scopes: scopes, audience: audiences, act: exchangeAct(subject, actor)}
	if at, ok := subject["auth_time"].(float64); ok {
		g.authTime = time.Unix(int64(at), 0)
	}
	g.acr, _ = subject["acr"].(string)
	if sid != "" {
		// The new token lives in the subject token's SSO session: a session
		// of the client under it, so that it ends with that session.
		if err := exchangeSession(a, ctx, realm, client, user, sid); err != nil {
			return nil, err
		}
		g.sid = sid
	}
	token, _, exp, err := a.accessToken(ctx, g, nil)
	if err != nil {
		return nil, err
	}
	return op.NewResponse(&oidc.TokenExchangeResponse{AccessToken: token, IssuedTokenType: oidc.AccessTokenType,
		TokenType: oidc.BearerToken, ExpiresIn: uint64(exp.Sub(a.now()) / time.Second), Scopes: strings.Fields(g.scopeParam())}), nil
}

// exchangeAudiences are the audiences an exchange asks for (audience and
// resource), each the clientId of an enabled client of the realm; none
// asked for is the client itself, as for any token.
func exchangeAudiences(a *App, ctx context.Context, realm *store.Realm, req *oidc.TokenExchangeRequest) ([]string, error) {
	var out []string
	for _, aud := range slices.Concat([]string(req.Audience), req.Resource) {
		if aud == "" || slices.Contains(out, aud) {
			continue
		}
		c, err := a.cachedClient(ctx, realm.ID, aud)
		if errors.Is(err, store.ErrNotFound) || err == nil && !c.Enabled {
			return nil, oidc.ErrInvalidTarget().WithDescription("%s is not a client of this realm", aud)
		} else if err != nil {
			return nil, err
		}
		out = append(out, aud)
	}
	if len(out) > 20 {
		return nil, oidc.ErrInvalidTarget().WithDescription("at most 20 audiences")
	}
	return out, nil
}

// exchangeScopes are the scopes of the new token: those asked for, each
// one the subject token carries (an exchange narrows, never widens), or
// all of the subject token's when none is asked for.
func exchangeScopes(a *App, ctx context.Context, realm *store.Realm, subject map[string]any, requested []string) ([]*store.ClientScope, error) {
	scope, _ := subject["scope"].(string)
	held := strings.Fields(scope)
	all, err := a.store.ListClientScopes(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	byName := func(name string) *store.ClientScope {
		if i := slices.IndexFunc(all, func(sc *store.ClientScope) bool { return sc.Name == name }); i >= 0 {
			return all[i]
		}
		return nil
	}
	var out []*store.ClientScope
	if len(requested) == 0 {
		for _, name := range held {
			if sc := byName(name); sc != nil {
				out = append(out, sc)
			}
		}
		return out, nil
	}
	for _, name := range requested {
		if name == "" || slices.ContainsFunc(out, func(sc *store.ClientScope) bool { return sc.Name == name }) {
			continue
		}
		sc := byName(name)
		if !slices.Contains(held, name) || sc == nil {
			return nil, oidc.ErrInvalidScope().WithDescription("scope %s is not among the subject token's", name)
		}
		out = append(out, sc)
	}
	return out, nil
}

// exchangeRefusal is the OAuth error of a refusal by the policies: the
// client may not exchange (unauthorized_client), not for this audience
// (invalid_target), not this scope (invalid_scope).
func exchangeRefusal(r *policies.ExchangeRefusal) error {
	why := r.Decision.Reason
	switch r.Action {
	case policies.ActionAudience:
		return oidc.ErrInvalidTarget().WithDescription("the realm's policies refuse the audience %s: %s", r.Item, why)
	case policies.ActionScope:
		return oidc.ErrInvalidScope().WithDescription("the realm's policies refuse the scope %s: %s", r.Item, why)
	}
	return oidc.ErrUnauthorizedClient().WithDescription("the realm's policies refuse this exchange to client %s: %s", r.Item, why)
}

// exchangeAct is the act claim of the new token (RFC 8693 §4.1): the
// actor token's subject, with the actors before it (the subject token's
// act) nested inside; without an actor token, the subject token's own.
func exchangeAct(subject, actor map[string]any) map[string]any {
	prior, _ := subject["act"].(map[string]any)
	if actor == nil {
		return prior
	}
	act := map[string]any{"sub": actor["sub"]}
	if azp, _ := actor["azp"].(string); azp != "" {
		act["client_id"] = azp
	}
	if prior != nil {
		act["act"] = prior
	}
	return act
}

// exchangeSession makes sure the client has a session under the subject
// token's SSO session, which the new token's standing reads
// (token_standing.go); an offline session is the client's own, and cannot
// carry another client's token.
func exchangeSession(a *App, ctx context.Context, realm *store.Realm, client *store.Client, user *store.User, sid string) error {
	sso, err := a.store.GetSession(ctx, realm.ID, sid)
	now := a.now().UnixMilli()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return oidc.ErrInvalidRequest().WithDescription("subject_token is not a live access token of this realm")
	case err != nil:
		return err
	case sso.Kind != store.SessionSSO || sso.Offline:
		return oidc.ErrInvalidRequest().WithDescription("the subject token belongs to an offline session, which only its client may use")
	case sso.UserID != user.ID || sso.ExpiresAt <= now:
		return oidc.ErrInvalidRequest().WithDescription("subject_token is not a live access token of this realm")
	}
	if _, err := a.store.ClientSessionOf(ctx, sso, client.ID, now); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return a.store.CreateSession(ctx, &store.Session{ID: uuid.NewString(), RealmID: realm.ID, UserID: user.ID,
		Kind: store.SessionOAuth, ParentID: sso.ID, ClientID: client.ID, IPAddress: sso.IPAddress, StartedAt: now,
		LastAccessAt: now, ExpiresAt: ssoMaxEnd(sso), AuthTime: sso.AuthTime, AMR: sso.AMR})
}
