package app

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/mux"

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
		EndSession: a.samlEndSession, LoggedOut: a.samlLoggedOut, LoginEvent: a.loginEvent, LoginEventIn: loginEventIn(a),
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
