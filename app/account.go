package app

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
)

// Account self-service under /realms/{realm}/account. One set of routes
// serves two kinds of caller: an application holding a user's access
// token (Authorization: Bearer), answered in JSON; and a person in a
// browser signed in to the realm (the SSO cookie), answered with pages.

// accountCaller is who an account request acts for.
type accountCaller struct {
	realm *store.Realm
	user  *store.User
	// session is the browser's SSO session, or the session a token was
	// issued in (its sid); nil for a token without one.
	session *store.Session
	// api is set for a Bearer caller: answers are JSON, forms need no
	// CSRF token (nothing is sent by the browser on its own).
	api bool
	// clientID is the client acting for the user, for events: the
	// token's azp, or account-console for the pages.
	clientID string
	// sid is a Bearer token's sid claim, "" when it has none; session is
	// nil when that session has ended.
	sid string
	// authTime is when the user last authenticated, as far as the caller
	// shows (Unix milliseconds; 0 when unknown): the browser's SSO
	// session's, or the later of a token's auth_time and its session's.
	authTime int64
}

// accountHandler serves one account route for an authenticated caller.
type accountHandler func(w http.ResponseWriter, r *http.Request, c *accountCaller) error

// errAccountToken is a refused Bearer token on an account path.
var errAccountToken = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeInvalidToken,
	Message: "the access token is invalid, expired or revoked"}

// errAccountNoToken answers an account request that brings neither a
// token nor a browser's sign-in.
var errAccountNoToken = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeUnauthorized,
	Message: "sign in first: send the user's access token (Authorization: Bearer <token>)"}

// browserNavigation says whether r is a browser loading a page: a GET or
// HEAD that accepts HTML, or an HTML form's POST, and not a script's
// request (X-Requested-With, or a Sec-Fetch-Mode other than navigate).
// Only such a request is worth a redirect to the login page.
func browserNavigation(r *http.Request) bool {
	if r.Header.Get("X-Requested-With") != "" {
		return false
	}
	if mode := r.Header.Get("Sec-Fetch-Mode"); mode != "" && mode != "navigate" {
		return false
	}
	if !acceptsHTML(r.Header.Values("Accept")) {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPost:
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		return ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data"
	}
	return false
}

// acceptsHTML says whether Accept headers name text/html with a quality
// above zero; a wildcard alone is not enough, every HTTP library sends one.
func acceptsHTML(accept []string) bool {
	for _, header := range accept {
		for _, part := range strings.Split(header, ",") {
			typ, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || typ != "text/html" {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); params["q"] == "" || err == nil && q > 0 {
				return true
			}
		}
	}
	return false
}

// bearerToken is the token of an Authorization: Bearer header, "" for none.
func bearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// accountBearer authenticates a Bearer caller: a valid, unrevoked access
// token of the realm whose user still exists and is enabled.
func (a *App) accountBearer(r *http.Request, realm *store.Realm, token string) (*accountCaller, error) {
	ctx := r.Context()
	claims, err := a.verifyAccessToken(ctx, realm, token)
	if err != nil {
		return nil, errAccountToken
	}
	sub, _ := claims["sub"].(string)
	user, err := a.store.GetUser(ctx, realm.ID, sub)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!user.Enabled || user.ServiceAccountClientID != "") {
		return nil, errAccountToken
	} else if err != nil {
		return nil, err
	}
	azp, _ := claims["azp"].(string)
	sid, _ := claims["sid"].(string)
	c := &accountCaller{realm: realm, user: user, api: true, clientID: azp, sid: sid}
	if at, ok := claims["auth_time"].(float64); ok {
		c.authTime = int64(at) * 1000
	}
	if sid != "" {
		sess, err := a.store.GetSession(ctx, realm.ID, sid)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if sess != nil && sess.UserID == user.ID && sess.Active(a.now().UnixMilli()) {
			c.session = sess
			c.authTime = max(c.authTime, sess.AuthTime) // signed in again since the token was issued
		}
	}
	return c, nil
}

// accountBrowser authenticates a browser by its SSO session; nil when it
// has none.
func (a *App) accountBrowser(r *http.Request, realm *store.Realm) (*accountCaller, error) {
	sess, user, err := a.ssoSession(r, realm)
	if err != nil || sess == nil {
		return nil, err
	}
	return &accountCaller{realm: realm, user: user, session: sess, clientID: accountConsoleClientID, authTime: sess.AuthTime}, nil
}

// accountRealm loads the realm of an account path: unknown or disabled is
// a 404, as on every protocol path.
func (a *App) accountRealm(r *http.Request) (*store.Realm, error) {
	realm, err := a.protocolRealm(r.Context(), mux.Vars(r)["realm"])
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoRealm
	}
	return realm, err
}

// accountPath is where the account pages of a realm live.
func accountPath(realm *store.Realm) string { return "/realms/" + realm.Name + "/account" }

// account wraps an account handler: a Bearer caller is authenticated by
// its token and answered in JSON; a browser by its SSO session, and one
// without is sent to sign in first when it navigates (browserNavigation);
// any other caller without either gets a 401 Bearer challenge. The
// handler returns its errors and this answers them in the caller's form:
// JSON for an API caller (writeAccountError), a page for a browser
// (renderPageError: the form again, or the error page). No answer is kept
// by any cache: every one is about a person, some hold secrets (a TOTP
// key, recovery codes, the data export).
func (a *App) account(h accountHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		// Until the caller is known: a token, or a request that is no
		// browser's navigation, is an API caller's.
		api := bearerToken(r) != "" || !browserNavigation(r)
		realm, err := a.accountRealm(r)
		if err == nil {
			r = signin.WithRealm(r, realm)
			var c *accountCaller
			switch c, err = a.accountAuthenticate(r, realm); {
			case c != nil:
				api = c.api
				err = h(w, r, c)
			case err == nil:
				err = a.accountSignIn(w, r, realm)
			}
		}
		switch {
		case err == nil:
		case api:
			a.writeAccountError(w, r, err)
		default:
			a.renderPageError(w, r, err)
		}
	})
}

// accountAuthenticate is the caller of an account request: the user of
// its Bearer token, else of the browser's SSO session; nil for a browser
// that navigates without one, to be sent to sign in.
func (a *App) accountAuthenticate(r *http.Request, realm *store.Realm) (*accountCaller, error) {
	if token := bearerToken(r); token != "" {
		return a.accountBearer(r, realm, token)
	}
	c, err := a.accountBrowser(r, realm)
	if err == nil && c == nil && !browserNavigation(r) {
		// An API caller without a token is told so (RFC 6750 §3.1),
		// never sent to a login page it cannot use.
		return nil, errAccountNoToken
	}
	return c, err
}

// writeAccountError answers an API caller of the account in JSON.
func (a *App) writeAccountError(w http.ResponseWriter, r *http.Request, err error) {
	setBearerChallenge(w, signin.RealmFrom(r.Context()), err)
	a.writeError(w, r, err)
}

// setBearerChallenge sets the WWW-Authenticate challenge of a Bearer caller
// refused for its credential: RFC 6750's for a missing or refused token,
// RFC 9470's for an authentication too old (the client can tell what to
// ask for). Other errors have none.
func setBearerChallenge(w http.ResponseWriter, realm *store.Realm, err error) {
	if realm == nil {
		return
	}
	challenge := `Bearer realm="` + realm.Name + `"`
	switch {
	case errors.Is(err, errAccountToken), errors.Is(err, errStepUpEnded):
		challenge += `, error="invalid_token"`
	case errors.Is(err, errAccountNoToken), errors.Is(err, errStepUpNoToken):
	case errors.Is(err, errReauthRequired):
		challenge += `, error="insufficient_user_authentication", error_description="a recent authentication is required", max_age="0"`
	default:
		return
	}
	w.Header().Set("WWW-Authenticate", challenge)
}

// accountPagesOnly serves h to browsers alone: for an API caller, the
// route is not there.
func accountPagesOnly(h accountHandler) accountHandler {
	return func(w http.ResponseWriter, r *http.Request, c *accountCaller) error {
		if c.api {
			return apperr.NotFound("page")
		}
		return h(w, r, c)
	}
}
