package app

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/saml"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// samlMetadataTimeout bounds each call of the fetch of an SP's metadata.
const samlMetadataTimeout = 10 * time.Second

// newSAML builds the SAML identity provider (the module app/saml) with
// what it takes of the server: the realm lookups, the key rotation
// schedule and the error page.
func (a *App) newSAML() *saml.Service {
	return saml.New(saml.Deps{Store: a.store, Log: a.log, Now: a.now, BaseURL: a.cfg.BaseURL,
		Realm: a.samlRealm, AdminRealm: a.realm, RotationDays: a.samlRotationDays, ErrorPage: a.samlErrorPage,
		Session: a.ssoSession, SignIn: a.samlSignIn, Land: func(w http.ResponseWriter, r *http.Request, f *signin.Flow) error { return landFlow(a, w, r, f) }, PostForm: a.samlPostForm, NameIDKey: a.samlNameIDKey(),
		EndSession: a.samlEndSession, LoggedOut: a.samlLoggedOut, LoginEvent: a.loginEvent,
		TwoFactors:      func(amr []string) bool { return acrOf(amr) == acrTwoFactors },
		Client:          httpx.OutboundClient(samlMetadataTimeout, a.cfg.OutboundAllowed),
		OutboundAllowed: a.cfg.OutboundAllowed})
}

// samlRealm is the enabled realm of a SAML protocol path.
func (a *App) samlRealm(r *http.Request) (*store.Realm, error) {
	realm, err := a.protocolRealm(r.Context(), mux.Vars(r)["realm"])
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoRealm
	}
	return realm, err
}

// samlRotationDays is the realm's key rotation period, which its SAML key
// follows as its OIDC keys do.
func (a *App) samlRotationDays(ctx context.Context, realmID string) (int, error) {
	ks, err := a.signingKeys.Settings(ctx, realmID)
	if err != nil {
		return 0, err
	}
	return ks.RotationDays, nil
}

// samlErrorPage is the error page of the SAML endpoints, in the realm's
// theme when there is a realm.
func (a *App) samlErrorPage(w http.ResponseWriter, r *http.Request, realm *store.Realm, err error) {
	if realm != nil {
		r = signin.WithRealm(r, realm)
	}
	a.renderPageError(w, r, err)
}

// samlClientID is the public client every realm has for its SAML identity
// provider: a browser that must sign in before a SAML response goes
// through the authorization endpoint as this client, as the account pages
// do as account-console, and comes back to the SAML endpoint with the
// realm's SSO cookie. The code that comes back is never redeemed.
const samlClientID = "saml-idp"

// samlRedirect is the saml-idp client's redirect URI: the SSO endpoint.
func (a *App) samlRedirect(realm *store.Realm) string {
	return a.cfg.BaseURL + "/realms/" + realm.Name + "/protocol/saml"
}

// samlClient is the realm's saml-idp client, made on first use.
func (a *App) samlClient(ctx context.Context, realm *store.Realm) (*store.Client, error) {
	c, err := a.store.GetClientByClientID(ctx, realm.ID, samlClientID)
	if !errors.Is(err, store.ErrNotFound) {
		return c, err
	}
	c = &store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientID: samlClientID, Name: "SAML identity provider",
		Description: "The realm's SAML identity provider: browsers sign in through it before a SAML response is sent.",
		ClientType:  identity.ClientPublic, Enabled: true, RedirectURIs: []string{a.samlRedirect(realm)},
		GrantTypes: []string{identity.GrantAuthorizationCode}, CreatedAt: a.now().UnixMilli()}
	if err := identity.ValidateClient(c); err != nil {
		return nil, err
	}
	err = a.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateClient(ctx, c); err != nil {
			return err
		}
		return clients.LinkNewScopes(ctx, tx, c)
	})
	if err != nil && !errors.Is(err, store.ErrConflict) { // a conflict: another request created it meanwhile
		return nil, err
	}
	return a.store.GetClientByClientID(ctx, realm.ID, samlClientID)
}

var errSAMLClientDisabled = apperr.New(http.StatusForbidden, apperr.CodeForbidden,
	"SAML sign-in is turned off in this realm (its saml-idp client is disabled)")

// samlSignIn sends the browser to sign in for sp: through the
// authentication flow bound to it, or as saml-idp with prompt=login when
// force; and back to the SAML endpoint with state.
func (a *App) samlSignIn(w http.ResponseWriter, r *http.Request, realm *store.Realm, sp *store.SAMLServiceProvider, state string, force bool) error {
	if to, err := beginSAMLFlow(a, w, r, realm, sp, state, force); to != "" || err != nil {
		if err == nil {
			http.Redirect(w, r, to, redirectStatus(r))
		}
		return err
	}
	client, err := a.samlClient(r.Context(), realm)
	if err != nil {
		return err
	}
	if !client.Enabled {
		return errSAMLClientDisabled
	}
	challenge := sha256.Sum256([]byte(randomToken())) // the verifier is not kept: the code is never redeemed
	q := url.Values{
		"client_id": {client.ClientID}, "redirect_uri": {a.samlRedirect(realm)}, "response_type": {"code"},
		"scope": {"openid"}, "state": {state}, "code_challenge_method": {"S256"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])},
	}
	if force {
		q.Set("prompt", "login")
	}
	http.Redirect(w, r, a.issuer(realm)+"/"+pathAuth+"?"+q.Encode(), redirectStatus(r))
	return nil
}

// samlPostForm renders the page that POSTs a SAML message to target.
func (a *App) samlPostForm(w http.ResponseWriter, r *http.Request, realm *store.Realm, target string, params url.Values) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	return a.formPostResponse(w, signin.WithRealm(r, realm), u, params)
}

// samlNameIDKey keys the realm's persistent SAML NameIDs.
func (a *App) samlNameIDKey() []byte {
	key, err := hkdf.Key(sha256.New, a.cfg.MasterKey, nil, "idenplane saml persistent nameid", 32)
	if err != nil {
		panic(err) // only for a key length hkdf cannot give, which 32 is not
	}
	return key
}

// samlEndSession ends the browser's SSO session on a SAML service
// provider's LogoutRequest, as the OIDC logout does.
func (a *App) samlEndSession(w http.ResponseWriter, r *http.Request, realm *store.Realm, sess *store.Session, sp string) error {
	ended, err := a.store.DeleteSession(r.Context(), realm.ID, sess.ID, store.SessionSSO, a.now().UnixMilli())
	if err != nil && !errors.Is(err, store.ErrNotFound) { // not found: ended meanwhile
		return err
	}
	expireSSOCookie(w, a.cfg.BaseURL, realm)
	a.loggedOut(r.Context(), realm, ended, sp, map[string]string{"protocol": "saml"})
	return nil
}

// samlLoggedOut is the signed-out page, for a logout whose service
// provider went meanwhile.
func (a *App) samlLoggedOut(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	return a.pages.Render(w, signin.WithRealm(r, realm), http.StatusOK, ui.LoggedOut(a.pages.Page("logout.done.title"), identity.RealmTitle(realm)))
}
