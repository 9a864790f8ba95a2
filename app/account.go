package app

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
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
		return nil, apperr.NotFound("realm")
	}
	return realm, err
}

// accountPath is where the account pages of a realm live.
func accountPath(realm *store.Realm) string { return "/realms/" + realm.Name + "/account" }

// account wraps an account handler: a Bearer caller is authenticated by
// its token and answered in JSON; a browser by its SSO session, and one
// without is sent to sign in first when it navigates (browserNavigation);
// any other caller without either gets a 401 Bearer challenge. Errors take the caller's form: JSON
// for the API, the error page for a browser. No answer is kept by any
// cache: every one is about a person, some hold secrets (a TOTP key,
// recovery codes, the data export).
func (a *App) account(h accountHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		realm, err := a.accountRealm(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		r = withRealm(r, realm)
		if token := bearerToken(r); token != "" {
			c, err := a.accountBearer(r, realm, token)
			if err == nil {
				err = h(w, r, c)
			}
			if err != nil {
				if errors.Is(err, errAccountToken) {
					w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm.Name+`", error="invalid_token"`)
				}
				a.writeError(w, r, err)
			}
			return
		}
		c, err := a.accountBrowser(r, realm)
		if err == nil && c == nil && !browserNavigation(r) {
			// An API caller without a token is told so (RFC 6750 §3.1),
			// never sent to a login page it cannot use.
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm.Name+`"`)
			a.writeError(w, r, errAccountNoToken)
			return
		}
		if err == nil && c == nil {
			err = a.accountSignIn(w, r, realm)
		} else if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			a.renderPageError(w, r, err)
		}
	})
}
