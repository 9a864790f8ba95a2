package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// passwordGrant answers the resource owner password credentials grant
// (RFC 6749 §4.3), which the library does not have: the realm middleware
// routes token requests with grant_type=password here. It answers like
// the library does for the other grants.
func (a *App) passwordGrant(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	resp, err := a.passwordTokens(ctx, r)
	if err != nil {
		// The flood guard holds: 429 with the wait, as on every credential
		// endpoint; a login storm (identity.ErrHashBusy): 503 with the wait.
		a.writeOAuthError(w, r, signin.ThrottleRefusal(err, "too many failed sign-ins; try again later", ""))
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	httpx.WriteJSON(w, http.StatusOK, resp.Data)
}

func (a *App) passwordTokens(ctx context.Context, r *http.Request) (*op.Response, error) {
	realm := signin.RealmFrom(ctx)
	if err := r.ParseForm(); err != nil {
		return nil, oidc.ErrInvalidRequest().WithDescription("the form could not be read")
	}
	id, secret, err := formClientCredentials(r)
	if err != nil {
		return nil, err
	}
	client, err := a.authenticateClient(ctx, realm, id, secret)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(client.GrantTypes, identity.GrantPassword) {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("password is not among this client's grant types")
	}
	if client.RequireConsent {
		// As in Keycloak: this grant has no page to ask for consent on.
		return nil, oidc.ErrUnauthorizedClient().WithDescription("the client requires consent, which the password grant cannot ask for")
	}
	// Credentials come in the body only, never in the URL.
	username, password := r.PostForm.Get("username"), r.PostForm.Get("password")
	if username == "" || password == "" {
		return nil, oidc.ErrInvalidRequest().WithDescription("username and password are required")
	}
	scopes, err := a.grantScopes(ctx, realm, client, strings.Fields(r.PostForm.Get("scope")))
	if err != nil {
		return nil, err
	}
	user, err := a.id.CheckCredentials(ctx, realm, username, password, a.clientIP(r))
	if reason := signin.LoginErrorReason(err); reason != "" {
		lockedID, _ := identity.LockedOut(err)
		a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: lockedID, ClientID: client.ClientID,
			IPAddress: a.clientIP(r), Error: reason, Details: map[string]string{"username": username, "grant_type": identity.GrantPassword}})
	}
	var throttled *identity.ThrottledError
	switch {
	case errors.Is(err, identity.ErrBadCredentials): // a lockout too: it answers as a wrong password
		return nil, oidc.ErrInvalidGrant().WithDescription("invalid user credentials")
	case errors.Is(err, identity.ErrUserDisabled):
		return nil, oidc.ErrInvalidGrant().WithDescription("account disabled")
	case errors.As(err, &throttled):
		return nil, err // passwordGrant answers 429
	case err != nil:
		return nil, err
	}
	if identity.EmailVerificationRequired(realm, user) {
		a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, ClientID: client.ClientID,
			IPAddress: a.clientIP(r), Error: "email_not_verified", Details: map[string]string{"username": username, "grant_type": identity.GrantPassword}})
		return nil, oidc.ErrInvalidGrant().WithDescription("email address not verified")
	}
	amr, flow, err := directGrantSteps(a, ctx, r, realm, client, user)
	if err != nil {
		return nil, err
	}
	if identity.PasswordChangeRequired(realm, user, a.now()) {
		// The change needs a page: the user signs in through the browser
		// first. Keycloak's answer and event error, for its required actions.
		a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLoginError, UserID: user.ID, ClientID: client.ClientID,
			IPAddress: a.clientIP(r), Error: "resolve_required_actions",
			Details: map[string]string{"username": username, "grant_type": identity.GrantPassword, "required_action": store.ActionUpdatePassword}})
		return nil, oidc.ErrInvalidGrant().WithDescription("Account is not fully set up")
	}
	// The grant signs the user in without a browser: an SSO session no
	// cookie points to, which sessions list and logout ends like any other.
	now := a.now().UnixMilli()
	sso := NewSSOSession(realm, user, uuid.NewString(), a.clientIP(r), now)
	sso.AMR = amr
	names := scopeNames(scopes)
	plan := planClientGrant(realm, client, sso, nil, names, now)
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateSession(ctx, sso); err != nil {
			return err
		}
		return plan.write(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	// The assessed sign-in joins the user's history, and its session
	// starts its risk profile (app/risk).
	flow.SessionID = sso.ID
	if err := a.signin.DirectSucceeded(ctx, flow); err != nil {
		return nil, err
	}
	a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLogin, UserID: user.ID, ClientID: client.ClientID, SessionID: sso.ID,
		IPAddress: a.clientIP(r), Details: map[string]string{"grant_type": identity.GrantPassword}})
	return a.tokenResponse(ctx, &userTokens{
		g:   &tokenGrant{realm: realm, client: client, user: user, scopes: scopes, sid: sso.ID, authTime: time.UnixMilli(now)},
		amr: sso.AMR, refresh: plan.token,
	})
}

// formClientCredentials reads the client's credentials as the library
// does: HTTP Basic (form-encoded, RFC 6749 §2.3.1) or client_id and
// client_secret in the body, not both.
func formClientCredentials(r *http.Request) (id, secret string, err error) {
	basicID, basicSecret, basic := r.BasicAuth()
	if !basic {
		return r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), nil
	}
	if r.PostForm.Get("client_secret") != "" {
		return "", "", oidc.ErrInvalidRequest().WithDescription("client authentication must not use more than one method")
	}
	if id, err = url.QueryUnescape(basicID); err != nil {
		return "", "", errClientAuth
	}
	if secret, err = url.QueryUnescape(basicSecret); err != nil {
		return "", "", errClientAuth
	}
	return id, secret, nil
}
