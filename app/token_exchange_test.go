package app

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/idenplane/idenplane/app/events"
)

const (
	tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
	accessTokenType    = "urn:ietf:params:oauth:token-type:access_token"
)

// exchangeEnv is realm acme with alice, who signs in at the client web
// (password grant, so that her token has an SSO session), and the
// clients of the exchanges, with the realm's rules of exchange:
//   - gateway may exchange, for the audience orders-api (not
//     billing-api), any scope but email;
//   - scheduler, a service account, may act for the subject (delegation);
//     intruder may not;
//   - rogue may not exchange at all.
type exchangeEnv struct {
	*oidcTestServer
	t       *testing.T
	secrets map[string]string
	alice   string
}

func newExchangeEnv(t *testing.T) *exchangeEnv {
	t.Helper()
	s := newOIDCTestServer(t)
	s.createRealm("acme")
	e := &exchangeEnv{oidcTestServer: s, t: t, secrets: map[string]string{}}
	e.alice = s.createUser("acme", map[string]any{"username": "alice", "email": "alice@acme.test", "password": "correct horse 1"})["id"].(string)
	mustStatus(t, e.admin(http.MethodPut, "/admin/realms/acme/events/config", map[string]any{"eventsEnabled": true}), http.StatusOK)
	for id, grants := range map[string][]string{"web": {"password"}, "gateway": {"client_credentials"}, "rogue": {"client_credentials"},
		"scheduler": {"client_credentials"}, "intruder": {"client_credentials"}, "orders-api": {"client_credentials"},
		"billing-api": {"client_credentials"}} {
		r := e.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": id, "grantTypes": grants})
		mustStatus(t, r, http.StatusCreated)
		e.secrets[id] = r.object(t)["secret"].(string)
	}
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "spa", "clientType": "PUBLIC"}),
		http.StatusCreated)
	for _, p := range []map[string]any{
		{"name": "gateway exchanges", "effect": "permit", "target": exchangeTarget("exchange"), "condition": `resource.id == "gateway"`},
		{"name": "gateway's audiences", "effect": "permit", "target": exchangeTarget("audience"),
			"condition": `resource.properties.client == "gateway" && resource.id in ["orders-api"]`},
		{"name": "scopes but email", "effect": "permit", "target": exchangeTarget("scope"), "condition": `resource.id != "email"`},
		{"name": "only the scheduler acts", "effect": "deny", "target": exchangeTarget("exchange"),
			"condition": `resource.properties.delegation && resource.properties.actorClient != "scheduler"`},
	} {
		mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/policies", p), http.StatusCreated)
	}
	return e
}

func exchangeTarget(action string) map[string]any {
	return map[string]any{"resourceTypes": []string{"token-exchange"}, "actions": []string{action}}
}

// aliceToken is an access token of alice's at web, with an SSO session.
func (e *exchangeEnv) aliceToken(scope string) string {
	e.t.Helper()
	cfg := oauth2.Config{ClientID: "web", ClientSecret: e.secrets["web"], Scopes: strings.Fields(scope),
		Endpoint: oauth2.Endpoint{TokenURL: e.issuer("acme") + "/protocol/openid-connect/token"}}
	tok, err := cfg.PasswordCredentialsToken(e.t.Context(), "alice", "correct horse 1")
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.AccessToken
}

// serviceToken is a client credentials token of the client's.
func (e *exchangeEnv) serviceToken(clientID string) string {
	e.t.Helper()
	cfg := clientcredentials.Config{ClientID: clientID, ClientSecret: e.secrets[clientID],
		TokenURL: e.issuer("acme") + "/protocol/openid-connect/token"}
	tok, err := cfg.Token(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return tok.AccessToken
}

// exchange asks for a token exchange as clientID with x/oauth2's client
// credentials flow, its grant type replaced: the answer's token, or the
// OAuth error.
func (e *exchangeEnv) exchange(clientID string, params url.Values) (*oauth2.Token, *oauth2.RetrieveError) {
	e.t.Helper()
	params.Set("grant_type", tokenExchangeGrant)
	if params.Get("subject_token_type") == "" {
		params.Set("subject_token_type", accessTokenType)
	}
	if params.Has("actor_token") && params.Get("actor_token_type") == "" {
		params.Set("actor_token_type", accessTokenType)
	}
	cfg := clientcredentials.Config{ClientID: clientID, ClientSecret: e.secrets[clientID], EndpointParams: params,
		TokenURL: e.issuer("acme") + "/protocol/openid-connect/token", AuthStyle: oauth2.AuthStyleInHeader}
	tok, err := cfg.Token(e.t.Context())
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return nil, re
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return tok, nil
}

func (e *exchangeEnv) introspect(token string) map[string]any {
	e.t.Helper()
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token/introspect", "token="+url.QueryEscape(token),
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("gateway:"+e.secrets["gateway"])))
	mustStatus(e.t, r, http.StatusOK)
	return r.object(e.t)
}

// Discovery advertises the grant; a client exchanges alice's token for
// one for another audience with fewer scopes, signed by the realm's keys,
// which introspects as active and ends with her session.
func TestTokenExchangeAudienceAndScopes(t *testing.T) {
	e := newExchangeEnv(t)
	ctx := context.Background()
	provider, err := oidc.NewProvider(ctx, e.issuer("acme"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Grants []string `json:"grant_types_supported"`
	}
	if err := provider.Claims(&doc); err != nil || !slices.Contains(doc.Grants, tokenExchangeGrant) {
		t.Fatalf("grant_types_supported %v %v", doc.Grants, err)
	}
	subject := e.aliceToken("openid profile")
	_, subjectClaims := jwtParts(t, subject)
	tok, oerr := e.exchange("gateway", url.Values{"subject_token": {subject}, "audience": {"orders-api"}, "scope": {"profile"}})
	if oerr != nil {
		t.Fatalf("exchange: %s", oerr.Body)
	}
	if tok.TokenType != "Bearer" || tok.Extra("issued_token_type") != accessTokenType || tok.RefreshToken != "" || tok.Expiry.IsZero() {
		t.Fatalf("answer %+v issued_token_type %v", tok, tok.Extra("issued_token_type"))
	}
	if _, err := oidc.NewRemoteKeySet(ctx, e.issuer("acme")+"/protocol/openid-connect/certs").VerifySignature(ctx, tok.AccessToken); err != nil {
		t.Fatalf("signature: %v", err)
	}
	header, claims := jwtParts(t, tok.AccessToken)
	if header["typ"] != "at+jwt" || claims["iss"] != e.issuer("acme") || claims["sub"] != e.alice || claims["aud"] != "orders-api" ||
		claims["azp"] != "gateway" || claims["scope"] != "profile" || claims["sid"] != subjectClaims["sid"] || claims["act"] != nil {
		t.Fatalf("claims %v", claims)
	}
	if claims["preferred_username"] != "alice" || claims["email"] != nil {
		t.Errorf("the narrowed scopes' claims: %v", claims)
	}
	// Several audiences, audience and resource alike.
	mustStatus(t, e.admin(http.MethodPost, "/admin/realms/acme/policies", map[string]any{"name": "billing too", "effect": "permit",
		"target": exchangeTarget("audience"), "condition": `resource.id == "billing-api"`}), http.StatusCreated)
	tok, oerr = e.exchange("gateway", url.Values{"subject_token": {subject}, "audience": {"orders-api"}, "resource": {"billing-api"},
		"scope": {"openid"}})
	if oerr != nil {
		t.Fatalf("two audiences: %s", oerr.Body)
	}
	if _, claims := jwtParts(t, tok.AccessToken); !slices.Equal(toStrings(claims["aud"]), []string{"orders-api", "billing-api"}) {
		t.Errorf("aud %v", claims["aud"])
	}

	if got := e.introspect(tok.AccessToken); got["active"] != true || got["sub"] != e.alice || got["azp"] != "gateway" {
		t.Fatalf("introspection %v", got)
	}
	var exchanges []events.LoginEventRep
	e.admin(http.MethodGet, "/admin/realms/acme/events?type=TOKEN_EXCHANGE", nil).decode(t, &exchanges)
	if len(exchanges) != 2 || exchanges[0].UserID != e.alice || exchanges[0].ClientID != "gateway" ||
		exchanges[0].Details["subject_client"] != "web" || exchanges[0].SessionID != subjectClaims["sid"] ||
		exchanges[0].Details["audience"] != "orders-api billing-api" {
		t.Fatalf("events %+v", exchanges)
	}
	// The exchanged token dies with alice's session.
	mustStatus(t, e.admin(http.MethodDelete, "/admin/realms/acme/users/"+e.alice+"/sessions", nil), http.StatusOK)
	for name, token := range map[string]string{"exchanged": tok.AccessToken, "subject": subject} {
		if got := e.introspect(token); got["active"] != false {
			t.Errorf("the %s token after the session ended: %v", name, got)
		}
	}
	if _, oerr := e.exchange("gateway", url.Values{"subject_token": {subject}, "audience": {"orders-api"}, "scope": {"profile"}}); oerr == nil ||
		oerr.ErrorCode != "invalid_request" {
		t.Errorf("an ended subject token: %v", oerr)
	}
}

// Delegation: an actor token names the actor in act; exchanged again, the
// chain nests; a client service account's token exchanges too.
func TestTokenExchangeDelegation(t *testing.T) {
	e := newExchangeEnv(t)
	subject := e.aliceToken("profile")
	scheduler := e.serviceToken("scheduler")
	_, schedulerClaims := jwtParts(t, scheduler)
	tok, oerr := e.exchange("gateway", url.Values{"subject_token": {subject}, "actor_token": {scheduler}, "audience": {"orders-api"},
		"scope": {"profile"}})
	if oerr != nil {
		t.Fatalf("delegation: %s", oerr.Body)
	}
	_, claims := jwtParts(t, tok.AccessToken)
	act, _ := claims["act"].(map[string]any)
	if claims["sub"] != e.alice || act["sub"] != schedulerClaims["sub"] || act["client_id"] != "scheduler" || act["act"] != nil {
		t.Fatalf("claims %v", claims)
	}
	// A chain: the delegated token, exchanged with the actor again,
	// nests the earlier actor.
	again, oerr := e.exchange("gateway", url.Values{"subject_token": {tok.AccessToken}, "actor_token": {e.serviceToken("scheduler")},
		"audience": {"orders-api"}})
	if oerr != nil {
		t.Fatalf("a chain: %s", oerr.Body)
	}
	_, claims = jwtParts(t, again.AccessToken)
	act, _ = claims["act"].(map[string]any)
	prior, _ := act["act"].(map[string]any)
	if act["sub"] != schedulerClaims["sub"] || prior["sub"] != schedulerClaims["sub"] || prior["client_id"] != "scheduler" {
		t.Fatalf("chained act %v", claims["act"])
	}
	// Without an actor token, the subject token's act stays.
	kept, oerr := e.exchange("gateway", url.Values{"subject_token": {tok.AccessToken}, "audience": {"orders-api"}})
	if oerr != nil {
		t.Fatal(oerr.Body)
	}
	if _, claims := jwtParts(t, kept.AccessToken); claims["act"].(map[string]any)["sub"] != schedulerClaims["sub"] {
		t.Errorf("act %v", claims["act"])
	}
	var evs []events.LoginEventRep
	e.admin(http.MethodGet, "/admin/realms/acme/events?type=TOKEN_EXCHANGE", nil).decode(t, &evs)
	if len(evs) != 3 || evs[2].UserID != e.alice || evs[2].Details["actor"] != schedulerClaims["sub"] || evs[2].Details["actor_client"] != "scheduler" {
		t.Fatalf("events %+v", evs)
	}
	// A service account's token (no session) exchanges as well; its
	// exchanged token stands while the service account does.
	svc, oerr := e.exchange("gateway", url.Values{"subject_token": {e.serviceToken("orders-api")}, "audience": {"orders-api"},
		"scope": {"profile"}})
	if oerr != nil {
		t.Fatalf("a service account's token: %s", oerr.Body)
	}
	if got := e.introspect(svc.AccessToken); got["active"] != true || got["sid"] != nil {
		t.Errorf("introspection %v", got)
	}
}

// Each refusal, with its OAuth error: the policies' (unauthorized_client,
// invalid_target, invalid_scope), and the protocol's (invalid_request,
// invalid_client); each recorded as TOKEN_EXCHANGE_ERROR.
func TestTokenExchangeRefusals(t *testing.T) {
	e := newExchangeEnv(t)
	subject := e.aliceToken("openid profile email")
	base := func(kv ...string) url.Values {
		v := url.Values{"subject_token": {subject}, "audience": {"orders-api"}, "scope": {"profile"}}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				v.Del(kv[i])
			} else {
				v.Set(kv[i], kv[i+1])
			}
		}
		return v
	}
	_, idToken := e.aliceIDToken()
	for _, c := range []struct {
		name, client string
		params       url.Values
		code, says   string
	}{
		{"a client the policies refuse", "rogue", base(), "unauthorized_client", "client rogue"},
		{"an actor the policies refuse", "gateway", base("actor_token", e.serviceToken("intruder")), "unauthorized_client",
			"only the scheduler acts"},
		{"an audience the policies refuse", "gateway", base("audience", "billing-api"), "invalid_target", "billing-api"},
		{"an audience that is no client", "gateway", base("audience", "nowhere"), "invalid_target", "nowhere"},
		{"a resource that is no client", "gateway", base("resource", "https://api.example/"), "invalid_target", "https://api.example/"},
		{"a scope the policies refuse", "gateway", base("scope", "email"), "invalid_scope", "email"},
		{"every scope of the subject, email among them", "gateway", base("scope", ""), "invalid_scope", "email"},
		{"a scope the subject token lacks", "gateway", base("scope", "phone"), "invalid_scope", "phone"},
		{"a garbage subject token", "gateway", base("subject_token", "garbage"), "invalid_request", "subject_token"},
		{"an ID token as the subject", "gateway", base("subject_token", idToken), "invalid_request", "subject_token"},
		{"another token type", "gateway", base("subject_token_type", "urn:ietf:params:oauth:token-type:refresh_token"),
			"invalid_request", "subject_token_type"},
		{"a garbage actor token", "gateway", base("actor_token", "garbage"), "invalid_request", "actor_token"},
		{"a refresh token asked for", "gateway", base("requested_token_type", "urn:ietf:params:oauth:token-type:refresh_token"),
			"invalid_request", "requested_token_type"},
		{"no subject token", "gateway", base("subject_token", ""), "invalid_request", "subject_token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, oerr := e.exchange(c.client, c.params)
			if oerr == nil {
				t.Fatalf("exchanged: %+v", tok)
			}
			if oerr.ErrorCode != c.code || !strings.Contains(oerr.ErrorDescription, c.says) {
				t.Errorf("%d %s: %s, want %s saying %q", oerr.Response.StatusCode, oerr.ErrorCode, oerr.ErrorDescription, c.code, c.says)
			}
		})
	}
	// A public client, and a wrong secret.
	form := "grant_type=" + url.QueryEscape(tokenExchangeGrant) + "&subject_token_type=" + url.QueryEscape(accessTokenType) +
		"&subject_token=" + url.QueryEscape(subject) + "&audience=orders-api"
	r := e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form+"&client_id=spa",
		"Content-Type: application/x-www-form-urlencoded")
	mustOAuthError(t, r, http.StatusBadRequest, "unauthorized_client")
	r = e.request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form,
		"Content-Type: application/x-www-form-urlencoded", "Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("gateway:wrong")))
	mustOAuthError(t, r, http.StatusUnauthorized, "invalid_client")

	var refused []events.LoginEventRep
	e.admin(http.MethodGet, "/admin/realms/acme/events?type=TOKEN_EXCHANGE_ERROR&max=100", nil).decode(t, &refused)
	byError := map[string]int{}
	for _, ev := range refused {
		byError[ev.Error]++
	}
	if byError["unauthorized_client"] != 3 || byError["invalid_target"] != 3 || byError["invalid_scope"] != 3 || byError["invalid_client"] != 1 {
		t.Errorf("refusals recorded %v", byError)
	}
	for _, ev := range refused {
		if ev.Error == "invalid_target" && (ev.UserID != e.alice || ev.ClientID != "gateway") {
			t.Errorf("a refusal without its subject: %+v", ev)
		}
	}
	// Nothing was issued: alice's sessions are her sign-ins' at web.
	var sessions []map[string]any
	e.admin(http.MethodGet, "/admin/realms/acme/users/"+e.alice+"/sessions", nil).decode(t, &sessions)
	for _, s := range sessions {
		if s["clientId"] != nil && s["clientId"] != "web" {
			t.Errorf("a session of a refused exchange: %v", s)
		}
	}
}

// aliceIDToken signs alice in at web with openid and answers the ID token.
func (e *exchangeEnv) aliceIDToken() (access, id string) {
	e.t.Helper()
	cfg := oauth2.Config{ClientID: "web", ClientSecret: e.secrets["web"], Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{TokenURL: e.issuer("acme") + "/protocol/openid-connect/token"}}
	tok, err := cfg.PasswordCredentialsToken(e.t.Context(), "alice", "correct horse 1")
	if err != nil {
		e.t.Fatal(err)
	}
	idt, _ := tok.Extra("id_token").(string)
	return tok.AccessToken, idt
}
