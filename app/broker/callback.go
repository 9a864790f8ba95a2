package broker

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gorilla/mux"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/store"
)

// upstreamTimeout bounds the whole exchange with the provider at a
// callback (token, keys, userinfo), on top of each call's own timeout.
const upstreamTimeout = 20 * time.Second

// callbackParams are the callback's query as the provider sent it.
type callbackParams struct {
	state, code, err, errDescription string
}

// readCallback reads the callback's parameters: state always, then either
// an error (RFC 6749 §4.1.2.1) or a code. A parameter given twice is
// refused, as the authorization endpoint refuses one.
func readCallback(q url.Values) (callbackParams, error) {
	for name, vs := range q {
		if len(vs) > 1 {
			return callbackParams{}, fmt.Errorf("parameter %s is repeated", name)
		}
	}
	p := callbackParams{state: q.Get("state"), code: q.Get("code"), err: q.Get("error"),
		errDescription: q.Get("error_description")}
	switch {
	case p.state == "":
		return p, errors.New("state is missing")
	case len(p.state) > 512 || len(p.code) > 4096 || len(p.err) > 256 || len(p.errDescription) > 1024:
		return p, errors.New("a parameter is too long")
	case p.err == "" && p.code == "":
		return p, errors.New("neither code nor error")
	}
	return p, nil
}

// Callback is where the provider sends the browser back. The state must
// be one this server sent, unused, unexpired, for this provider and this
// browser; then the code is exchanged (with the PKCE verifier), the ID
// token verified (signature by the provider's keys, issuer, audience,
// expiry, nonce) or, for OAuth 2.0 providers, the profile read from
// userinfo; then the user is found, linked or created, and signed in.
// Every failure ends on an error page and an
// IDENTITY_PROVIDER_LOGIN_ERROR event, never with a signed-in user.
func (s *Service) Callback(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ctx := r.Context()
	p, err := s.enabledProvider(ctx, realm, mux.Vars(r)["alias"])
	if err != nil {
		return err
	}
	err = s.callback(w, r, realm, p)
	var f *failure
	if errors.As(err, &f) {
		s.deps.Log.WarnContext(ctx, "sign-in through identity provider failed", "realm", realm.Name,
			"provider", p.Alias, "reason", f.reason, "err", f.cause)
		s.deps.LoginEvent(ctx, realm, store.LoginEvent{Type: store.EventIdentityProviderLoginError, IPAddress: s.deps.ClientIP(r),
			Error: f.reason, Details: map[string]string{"identity_provider": p.Alias}})
	}
	return err
}

func (s *Service) callback(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider) error {
	ctx := r.Context()
	params, err := readCallback(r.URL.Query())
	if err != nil {
		return fail(errState, "invalid_request", err)
	}
	l, err := s.deps.Store.TakeBrokerLogin(ctx, realm.ID, store.HashToken(params.state), s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return fail(errState, "invalid_state", errors.New("unknown, used or expired state"))
	} else if err != nil {
		return err
	}
	if l.ProviderID != p.ID {
		return fail(errState, "provider_mismatch", errors.New("the state is another provider's"))
	}
	browser := store.HashToken(s.deps.Pages.BrowserSecret(w, r, realm))
	if subtle.ConstantTimeCompare(browser, l.BrowserHash) != 1 {
		return fail(errOtherBrowser, "different_browser", errors.New("the state was issued to another browser"))
	}
	if params.err != "" {
		page := errUpstream
		if params.err == "access_denied" {
			page = errDenied
		}
		return fail(page, params.err, fmt.Errorf("the provider answered %s: %s", params.err, params.errDescription))
	}
	if p.ClientSecret == "" {
		return fail(errNotConfigured, "not_configured", errors.New("the provider has no client secret"))
	}
	ident, err := s.upstreamIdentity(ctx, realm, p, l, params.code)
	if err != nil {
		return err
	}
	switch {
	case l.LinkUserID != "":
		return s.finishLink(w, r, realm, p, l, ident)
	case l.AuthRequestID == "" && l.SignInFlowID == "":
		return fail(errStaleRequest, "invalid_request", errors.New("no authorization request or sign-in flow to continue"))
	}
	return s.finishLogin(w, r, realm, p, l, ident)
}

// upstreamIdentity exchanges the code and reads who signed in.
func (s *Service) upstreamIdentity(ctx context.Context, realm *store.Realm, p *store.IdentityProvider, l *store.BrokerLogin, code string) (*upstreamIdentity, error) {
	ctx, cancel := context.WithTimeout(ctx, upstreamTimeout)
	defer cancel()
	ctx = oidc.ClientContext(ctx, s.deps.Client) // also x/oauth2's client: both read oauth2.HTTPClient
	tok, err := s.oauth2Config(realm, p).Exchange(ctx, code, oauth2.VerifierOption(l.CodeVerifier))
	if err != nil {
		return nil, fail(errUpstream, "code_exchange_failed", err)
	}
	st, err := readSettings(p)
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if usesIDToken(p.ProviderType) {
		if claims, err = s.verifyIDToken(ctx, p, tok, l.Nonce); err != nil {
			return nil, err
		}
	} else if claims, err = s.userinfo(ctx, p, tok); err != nil {
		return nil, err
	}
	ident, err := mapClaims(effectiveMapping(p.ProviderType, st.ClaimMapping), claims)
	if err != nil {
		return nil, fail(errProfile, "invalid_profile", err)
	}
	if st.StoreToken {
		if ident.Token, err = tokenJSON(tok); err != nil {
			return nil, err
		}
	}
	if st.UpstreamLogout && usesIDToken(p.ProviderType) {
		ident.IDToken, _ = tok.Extra("id_token").(string) // verified above
	}
	return ident, nil
}

// verifyIDToken checks the ID token of a token response: signed by one of
// the provider's keys (fetched from jwksUrl, cached, fetched again for a
// key it has not seen), issued by the configured issuer, for our client,
// not expired, and carrying the nonce this sign-in sent.
func (s *Service) verifyIDToken(ctx context.Context, p *store.IdentityProvider, tok *oauth2.Token, nonce string) (map[string]any, error) {
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return nil, fail(errToken, "invalid_token", errors.New("the token response has no id_token"))
	}
	keys := s.keys.get(oidc.ClientContext(context.Background(), s.deps.Client), p.JWKSURL)
	multiTenant := isMultiTenant(p)
	verifier := oidc.NewVerifier(p.Issuer, keys, &oidc.Config{ClientID: p.ClientID, Now: s.deps.Now,
		SkipIssuerCheck: multiTenant})
	idToken, err := verifier.Verify(ctx, raw)
	if err != nil {
		return nil, fail(errToken, "invalid_token", err)
	}
	if multiTenant {
		if err := checkTenantIssuer(idToken); err != nil {
			return nil, fail(errToken, "invalid_token", err)
		}
	}
	if subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(nonce)) != 1 {
		return nil, fail(errToken, "invalid_token", errors.New("the ID token's nonce is not the one sent"))
	}
	var claims map[string]any
	if err := idToken.Claims(&claims); err != nil {
		return nil, fail(errToken, "invalid_token", err)
	}
	return claims, nil
}
