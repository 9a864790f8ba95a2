package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
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
	ConsoleClientID = "account-console"
	// accountStateCookie carries the state of the sign-in the pages
	// started, and the page to return to after it.
	accountStateCookie = "idenplane_account_state"
	// The realm's OpenID Connect endpoints the pages send a browser to,
	// under its issuer.
	pathAuth   = "protocol/openid-connect/auth"
	pathLogout = "protocol/openid-connect/logout"
)

// randomToken is 256 random bits, URL-safe: a sign-in's state and PKCE
// verifier.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return base64.RawURLEncoding.EncodeToString(b)
}

// accountConsoleRedirect is the account-console's redirect URI: the
// account home, with the trailing slash Keycloak's has.
func (s *Service) accountConsoleRedirect(realm *store.Realm) string {
	return s.deps.BaseURL + Path(realm) + "/"
}

// newAccountConsole is the realm's account-console client: public (so
// PKCE is required), the code flow only, no consent screen.
func (s *Service) newAccountConsole(realm *store.Realm) *store.Client {
	return &store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientID: ConsoleClientID,
		Name: "Account console", Description: "The realm's account pages, where users manage their own account.",
		ClientType: identity.ClientPublic, Enabled: true, RedirectURIs: []string{s.accountConsoleRedirect(realm)},
		GrantTypes: []string{identity.GrantAuthorizationCode}, BackchannelLogoutSessionRequired: true,
		CreatedAt: s.deps.Now().UnixMilli()}
}

// SeedConsole gives a realm its account-console client and the
// standard scopes of a new client, inside the caller's transaction.
func (s *Service) SeedConsole(ctx context.Context, tx *store.Store, realm *store.Realm) error {
	c := s.newAccountConsole(realm)
	if err := identity.ValidateClient(c); err != nil {
		return err
	}
	if err := tx.CreateClient(ctx, c); err != nil {
		return err
	}
	return s.deps.LinkNewScopes(ctx, tx, c)
}

// console is the realm's account-console client, created on first
// use in a realm made (or imported) without one.
func (s *Service) console(ctx context.Context, realm *store.Realm) (*store.Client, error) {
	c, err := s.deps.Store.GetClientByClientID(ctx, realm.ID, ConsoleClientID)
	if !errors.Is(err, store.ErrNotFound) {
		return c, err
	}
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error { return s.SeedConsole(ctx, tx, realm) })
	if err != nil && !errors.Is(err, store.ErrConflict) { // a conflict: another request created it meanwhile
		return nil, err
	}
	return s.deps.Store.GetClientByClientID(ctx, realm.ID, ConsoleClientID)
}

// errAccountSignInFailed: the browser came back from the authorization
// endpoint still without an SSO session. Sending it round again would
// loop, so it is told instead.
var errAccountSignInFailed = apperr.New(http.StatusUnauthorized, apperr.CodeUnauthorized, "").WithKey("account.error.noCookies")

// errAccountConsoleDisabled: the realm turned its account pages off.
var errAccountConsoleDisabled = apperr.New(http.StatusForbidden, apperr.CodeForbidden, "").WithKey("account.error.disabled")

// signIn answers a browser that is not signed in to the realm: it
// is sent to the authorization endpoint as account-console, with a fresh
// state and PKCE challenge, and comes back to the page it asked for (a
// GET's), else to the account home.
func (s *Service) signIn(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	q := r.URL.Query()
	if q.Has("code") || q.Has("error") || q.Has("state") {
		return errAccountSignInFailed
	}
	returnTo := Path(realm) + "/"
	if r.Method == http.MethodGet {
		returnTo = r.URL.Path
	}
	return s.StartSignIn(w, r, realm, returnTo, "")
}

// StartSignIn sends the browser to sign in as account-console, with
// prompt when not "" (login: authenticate again even when signed in), and
// back to returnTo, a path of the account pages.
func (s *Service) StartSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, returnTo, prompt string) error {
	client, err := s.console(r.Context(), realm)
	if err != nil {
		return err
	}
	if !client.Enabled {
		return errAccountConsoleDisabled
	}
	state, verifier := randomToken(), randomToken()
	challenge := sha256.Sum256([]byte(verifier))
	cookie := s.deps.Pages.Cookie(realm, accountStateCookie, state+"."+base64.RawURLEncoding.EncodeToString([]byte(returnTo)))
	cookie.MaxAge = int(s.deps.SignInLifetime.Seconds())
	http.SetCookie(w, cookie)
	q := url.Values{
		"client_id": {client.ClientID}, "redirect_uri": {s.accountConsoleRedirect(realm)}, "response_type": {"code"},
		"scope": {"openid"}, "state": {state}, "code_challenge_method": {"S256"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])},
	}
	if prompt != "" {
		q.Set("prompt", prompt)
	}
	auth := s.issuer(realm) + "/" + pathAuth + "?" + q.Encode()
	status := http.StatusFound
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status = http.StatusSeeOther
	}
	http.Redirect(w, r, auth, status)
	return nil
}

// landed answers the return from the authorization endpoint to the
// account home of a browser now signed in: it goes on, without the code
// and state in its address, to the page that sent it to sign in when the
// state is the one this browser was given, else to the account home.
func (s *Service) landed(w http.ResponseWriter, r *http.Request, realm *store.Realm) {
	to := Path(realm) + "/"
	if c, err := r.Cookie(accountStateCookie); err == nil {
		state, path, _ := strings.Cut(c.Value, ".")
		got := r.URL.Query().Get("state")
		if b, err := base64.RawURLEncoding.DecodeString(path); err == nil && state != "" &&
			subtle.ConstantTimeCompare([]byte(state), []byte(got)) == 1 && isAccountPagePath(realm, string(b)) {
			to = string(b)
		}
		gone := s.deps.Pages.Cookie(realm, accountStateCookie, "")
		gone.MaxAge = -1
		http.SetCookie(w, gone)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// isAccountPagePath says whether p is a path of the realm's account
// pages, so that a return address read back from a cookie can only lead
// there.
func isAccountPagePath(realm *store.Realm, p string) bool {
	base := Path(realm)
	return (p == base || strings.HasPrefix(p, base+"/")) && !strings.Contains(p, "//") &&
		!strings.ContainsAny(p, "\\?#") && !strings.Contains(p, "/../")
}
