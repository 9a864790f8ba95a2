package app

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// A browser signs in to the account pages as to any application: through
// the realm's authorization endpoint, as the public client account-console
// that every realm has, Keycloak's built-in client of that name. The login
// leaves the browser with the realm's SSO cookie, and the pages work off
// that cookie, so the code that comes back is never redeemed: it expires
// unused, and its PKCE verifier was never kept, so nobody can redeem it.

const (
	accountConsoleClientID = "account-console"
	// accountStateCookie carries the state of the sign-in the pages
	// started, and the page to return to after it.
	accountStateCookie = "idenplane_account_state"
)

// accountConsoleRedirect is the account-console's redirect URI: the
// account home, with the trailing slash Keycloak's has.
func (a *App) accountConsoleRedirect(realm *store.Realm) string {
	return a.cfg.BaseURL + accountPath(realm) + "/"
}

// newAccountConsole is the realm's account-console client: public (so
// PKCE is required), the code flow only, no consent screen.
func (a *App) newAccountConsole(realm *store.Realm) *store.Client {
	return &store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientID: accountConsoleClientID,
		Name: "Account console", Description: "The realm's account pages, where users manage their own account.",
		ClientType: identity.ClientPublic, Enabled: true, RedirectURIs: []string{a.accountConsoleRedirect(realm)},
		GrantTypes: []string{identity.GrantAuthorizationCode}, BackchannelLogoutSessionRequired: true,
		CreatedAt: a.now().UnixMilli()}
}

// seedAccountConsole gives a realm its account-console client and the
// standard scopes of a new client, inside the caller's transaction.
func (a *App) seedAccountConsole(ctx context.Context, tx *store.Store, realm *store.Realm) error {
	c := a.newAccountConsole(realm)
	if err := identity.ValidateClient(c); err != nil {
		return err
	}
	if err := tx.CreateClient(ctx, c); err != nil {
		return err
	}
	return clients.LinkNewScopes(ctx, tx, c)
}

// accountConsole is the realm's account-console client, created on first
// use in a realm made (or imported) without one.
func (a *App) accountConsole(ctx context.Context, realm *store.Realm) (*store.Client, error) {
	c, err := a.store.GetClientByClientID(ctx, realm.ID, accountConsoleClientID)
	if !errors.Is(err, store.ErrNotFound) {
		return c, err
	}
	err = a.store.Tx(ctx, func(tx *store.Store) error { return a.seedAccountConsole(ctx, tx, realm) })
	if err != nil && !errors.Is(err, store.ErrConflict) { // a conflict: another request created it meanwhile
		return nil, err
	}
	return a.store.GetClientByClientID(ctx, realm.ID, accountConsoleClientID)
}

// errAccountSignInFailed: the browser came back from the authorization
// endpoint still without an SSO session. Sending it round again would
// loop, so it is told instead.
var errAccountSignInFailed = pageErr(http.StatusUnauthorized, apperr.CodeUnauthorized, "account.error.noCookies")

// errAccountConsoleDisabled: the realm turned its account pages off.
var errAccountConsoleDisabled = pageErr(http.StatusForbidden, apperr.CodeForbidden, "account.error.disabled")

// accountSignIn answers a browser that is not signed in to the realm: it
// is sent to the authorization endpoint as account-console, with a fresh
// state and PKCE challenge, and comes back to the page it asked for (a
// GET's), else to the account home.
func (a *App) accountSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	q := r.URL.Query()
	if q.Has("code") || q.Has("error") || q.Has("state") {
		return errAccountSignInFailed
	}
	returnTo := accountPath(realm) + "/"
	if r.Method == http.MethodGet {
		returnTo = r.URL.Path
	}
	return a.startAccountSignIn(w, r, realm, returnTo, "")
}

// startAccountSignIn sends the browser to sign in as account-console, with
// prompt when not "" (login: authenticate again even when signed in), and
// back to returnTo, a path of the account pages.
func (a *App) startAccountSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, returnTo, prompt string) error {
	client, err := a.accountConsole(r.Context(), realm)
	if err != nil {
		return err
	}
	if !client.Enabled {
		return errAccountConsoleDisabled
	}
	state, verifier := randomToken(), randomToken()
	challenge := sha256.Sum256([]byte(verifier))
	cookie := a.pages.Cookie(realm, accountStateCookie, state+"."+base64.RawURLEncoding.EncodeToString([]byte(returnTo)))
	cookie.MaxAge = int(authRequestLifetime.Seconds())
	http.SetCookie(w, cookie)
	q := url.Values{
		"client_id": {client.ClientID}, "redirect_uri": {a.accountConsoleRedirect(realm)}, "response_type": {"code"},
		"scope": {"openid"}, "state": {state}, "code_challenge_method": {"S256"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])},
	}
	if prompt != "" {
		q.Set("prompt", prompt)
	}
	auth := a.issuer(realm) + "/" + pathAuth + "?" + q.Encode()
	status := http.StatusFound
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, auth, status)
	return nil
}

// accountLanded answers the return from the authorization endpoint to the
// account home of a browser now signed in: it goes on, without the code
// and state in its address, to the page that sent it to sign in when the
// state is the one this browser was given, else to the account home.
func (a *App) accountLanded(w http.ResponseWriter, r *http.Request, realm *store.Realm) {
	to := accountPath(realm) + "/"
	if c, err := r.Cookie(accountStateCookie); err == nil {
		state, path, _ := strings.Cut(c.Value, ".")
		got := r.URL.Query().Get("state")
		if b, err := base64.RawURLEncoding.DecodeString(path); err == nil && state != "" &&
			subtle.ConstantTimeCompare([]byte(state), []byte(got)) == 1 && isAccountPagePath(realm, string(b)) {
			to = string(b)
		}
		gone := a.pages.Cookie(realm, accountStateCookie, "")
		gone.MaxAge = -1
		http.SetCookie(w, gone)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// isAccountPagePath says whether p is a path of the realm's account
// pages, so that a return address read back from a cookie can only lead
// there.
func isAccountPagePath(realm *store.Realm, p string) bool {
	base := accountPath(realm)
	return (p == base || strings.HasPrefix(p, base+"/")) && !strings.Contains(p, "//") &&
		!strings.ContainsAny(p, "\\?#") && !strings.Contains(p, "/../")
}
