package broker

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gorilla/mux"
	"golang.org/x/oauth2"

	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// loginLifetime is how long a person has at the upstream provider before
// the callback is refused.
const loginLifetime = 10 * time.Minute

// The paths of a provider's sign-in under /realms/{realm}.
const (
	pathLogin    = "/broker/{alias}/login"
	pathCallback = "/broker/{alias}/callback"
)

// Paths are the routes of the sign-in through a provider, under
// /realms/{realm}, for app/routes.go.
var Paths = struct{ Login, Callback, Link, Token, LogoutResponse string }{pathLogin, pathCallback, pathLink, pathToken,
	pathLogoutResponse}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// issuer is the realm's own address.
func (s *Service) issuer(realm *store.Realm) string {
	return s.deps.BaseURL + "/realms/" + realm.Name
}

// CallbackURL is where a provider sends people back to: the redirect URI
// to register with it.
func (s *Service) CallbackURL(realm *store.Realm, alias string) string {
	return s.issuer(realm) + "/broker/" + url.PathEscape(alias) + "/callback"
}

// LoginURL starts a sign-in with the provider alias for a pending
// authorization request: the sign-in page's buttons and the idp hint lead
// here.
func (s *Service) LoginURL(realm *store.Realm, alias, authRequestID string) string {
	return s.issuer(realm) + "/broker/" + url.PathEscape(alias) + "/login?" + url.Values{"authRequestID": {authRequestID}}.Encode()
}

// FlowLoginURL starts a sign-in with the provider alias for a step of a
// sign-in flow: an OpenID Connect request's flow through its request, as
// the sign-in page does; any other requester's (a SAML service provider's,
// a device approval's) through the flow itself.
func (s *Service) FlowLoginURL(realm *store.Realm, alias string, f *signin.Flow) string {
	if f.Requester() == signin.RequesterOIDC {
		return s.LoginURL(realm, alias, f.RequesterID())
	}
	return s.issuer(realm) + "/broker/" + url.PathEscape(alias) + "/login?" + url.Values{"flow": {f.ID()}}.Encode()
}

// enabledProvider loads the path's provider, if it may sign people in.
func (s *Service) enabledProvider(ctx context.Context, realm *store.Realm, alias string) (*store.IdentityProvider, error) {
	p, err := s.deps.Store.GetIdentityProvider(ctx, realm.ID, alias)
	if errors.Is(err, store.ErrNotFound) || err == nil && !p.Enabled {
		return nil, errUnknownProvider
	}
	return p, err
}

// oauth2Config is the provider as x/oauth2 speaks to it. A provider with ID
// tokens is always asked for scope openid, whatever its defaultScopes.
func (s *Service) oauth2Config(realm *store.Realm, p *store.IdentityProvider) *oauth2.Config {
	scopes := strings.Fields(p.DefaultScopes)
	if usesIDToken(p.ProviderType) && !slices.Contains(scopes, "openid") {
		scopes = append([]string{"openid"}, scopes...)
	}
	return &oauth2.Config{ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		Endpoint:    oauth2.Endpoint{AuthURL: p.AuthorizationURL, TokenURL: p.TokenURL},
		RedirectURL: s.CallbackURL(realm, p.Alias), Scopes: scopes}
}

// Login sends the browser to the provider to sign in, for the pending
// authorization request ?authRequestID (the sign-in page's button, the idp
// hint). Called as the spec has it, with client_id, redirect_uri, scope,
// state and nonce, it is an application's direct link: the request goes
// through the authorization endpoint, which checks the client and its
// redirect URI, and comes back here with the hint.
func (s *Service) Login(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ctx := r.Context()
	p, err := s.enabledProvider(ctx, realm, mux.Vars(r)["alias"])
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if flowID := q.Get("flow"); flowID != "" {
		return s.loginForFlow(w, r, realm, p, flowID, loginHint(q.Get("login_hint")))
	}
	authRequestID := q.Get("authRequestID")
	if authRequestID == "" {
		if !q.Has("client_id") {
			return errNoRequest
		}
		return s.viaAuthorization(w, r, realm, p, q)
	}
	ar, err := s.deps.Store.GetAuthRequest(ctx, realm.ID, authRequestID)
	if errors.Is(err, store.ErrNotFound) || err == nil && (ar.Done || ar.UserID != "" || ar.ExpiresAt <= s.deps.Now().UnixMilli()) {
		return errStaleRequest
	} else if err != nil {
		return err
	}
	if p.ClientSecret == "" {
		return errNotConfigured
	}
	return s.redirectUpstream(w, r, realm, p, &store.BrokerLogin{AuthRequestID: ar.ID}, loginHint(q.Get("login_hint")))
}

// loginForFlow sends the browser to the provider for a step of the sign-in
// flow flowID, which must be live and this browser's own.
func (s *Service) loginForFlow(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider, flowID, hint string) error {
	f, err := s.deps.Store.GetSignInFlow(r.Context(), realm.ID, flowID, s.deps.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return errStaleRequest
	} else if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(f.BrowserHash, store.HashToken(s.deps.Pages.BrowserSecret(w, r, realm))) != 1 {
		return errStaleRequest
	}
	if p.ClientSecret == "" {
		return errNotConfigured
	}
	return s.redirectUpstream(w, r, realm, p, &store.BrokerLogin{SignInFlowID: f.ID}, hint)
}

// maxLoginHint bounds the login_hint passed on to a provider.
const maxLoginHint = 255

// loginHint is the hint a sign-in passes on to the provider (the email
// home-realm discovery found it by), or "" for none or one too long.
func loginHint(hint string) string {
	if len(hint) > maxLoginHint || strings.ContainsFunc(hint, unicode.IsControl) {
		return ""
	}
	return hint
}

// viaAuthorization turns the spec's direct link into an authorization
// request of the realm, with this provider as its hint.
func (s *Service) viaAuthorization(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider, q url.Values) error {
	scope := q.Get("scope")
	if scope == "" {
		scope = "openid"
	}
	v := url.Values{"response_type": {"code"}, "client_id": {q.Get("client_id")}, "redirect_uri": {q.Get("redirect_uri")},
		"scope": {scope}, "kc_idp_hint": {p.Alias}}
	for _, name := range []string{"state", "nonce"} {
		if q.Has(name) {
			v.Set(name, q.Get(name))
		}
	}
	http.Redirect(w, r, s.issuer(realm)+"/protocol/openid-connect/auth?"+v.Encode(), http.StatusSeeOther)
	return nil
}

// redirectUpstream records the sign-in, bound to this browser, and sends
// the browser to the provider with a fresh state, nonce and PKCE
// challenge (S256), and the login hint when there is one.
func (s *Service) redirectUpstream(w http.ResponseWriter, r *http.Request, realm *store.Realm, p *store.IdentityProvider, l *store.BrokerLogin, hint string) error {
	state, verifier := randomToken(), oauth2.GenerateVerifier()
	now := s.deps.Now()
	l.StateHash, l.RealmID, l.ProviderID = store.HashToken(state), realm.ID, p.ID
	l.BrowserHash = store.HashToken(s.deps.Pages.BrowserSecret(w, r, realm))
	l.Nonce, l.CodeVerifier = randomToken(), verifier
	l.CreatedAt, l.ExpiresAt = now.UnixMilli(), now.Add(loginLifetime).UnixMilli()
	if err := s.deps.Store.CreateBrokerLogin(r.Context(), l); err != nil {
		if errors.Is(err, store.ErrNotFound) { // the request or user ended meanwhile
			return errStaleRequest
		}
		return err
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if usesIDToken(p.ProviderType) {
		opts = append(opts, oidc.Nonce(l.Nonce))
	}
	if hint != "" {
		opts = append(opts, oauth2.SetAuthURLParam("login_hint", hint))
	}
	http.Redirect(w, r, s.oauth2Config(realm, p).AuthCodeURL(state, opts...), http.StatusSeeOther)
	return nil
}

// HintedLoginURL is where an authorization request carrying an idp hint
// (kc_idp_hint or idp_hint) starts its sign-in: that provider's login,
// when the realm has it enabled; "" otherwise, and the sign-in page shows.
func (s *Service) HintedLoginURL(ctx context.Context, realm *store.Realm, hint, authRequestID string) (string, error) {
	if hint == "" {
		return "", nil
	}
	p, err := s.enabledProvider(ctx, realm, hint)
	if errors.Is(err, errUnknownProvider) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return s.LoginURL(realm, p.Alias, authRequestID), nil
}

// Buttons are the sign-in page's buttons for a pending request: one per
// enabled provider, named by its display name, else its preset's name,
// else its alias, but for those an organization's SSO connection hides
// (its people reach them by their email).
func (s *Service) Buttons(ctx context.Context, realm *store.Realm, authRequestID string) ([]ui.ProviderButton, error) {
	return s.buttons(ctx, realm, func(alias string) string { return s.LoginURL(realm, alias, authRequestID) })
}

// buttons are Buttons, each leading to the URL login gives its alias.
func (s *Service) buttons(ctx context.Context, realm *store.Realm, login func(alias string) string) ([]ui.ProviderButton, error) {
	list, err := s.deps.Store.ListIdentityProviders(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	hidden, err := s.deps.Store.HiddenSSOProviders(ctx, realm.ID)
	if err != nil {
		return nil, err
	}
	var out []ui.ProviderButton
	for _, p := range list {
		if !p.Enabled || p.ClientSecret == "" || slices.Contains(hidden, p.Alias) { // no secret (an import without secrets): it could not sign anyone in
			continue
		}
		name := p.DisplayName
		if name == "" {
			name = typeName(p.ProviderType)
		}
		if name == "" {
			name = p.Alias
		}
		out = append(out, ui.ProviderButton{Name: name, Type: p.ProviderType, URL: login(p.Alias)})
	}
	return out, nil
}
