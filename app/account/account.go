// Package account is the user's account self-service under
// /realms/{realm}/account. One set of routes serves two kinds of caller:
// an application holding a user's access token (Authorization: Bearer),
// answered in JSON; and a person in a browser signed in to the realm (the
// SSO cookie), answered with pages.
package account

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/identity/webauthnrp"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/assets"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Deps is what the account works with.
type Deps struct {
	Store   *store.Store
	Log     *slog.Logger
	Now     func() time.Time
	BaseURL string
	// Pages is the hosted pages' kit: rendering, language, cookies, CSRF.
	Pages    *signin.Pages
	Messages *ui.Catalogues
	Assets   *assets.Assets
	// Identity is the identity core: the user rules, the credential
	// checks, the TOTP enrolment.
	Identity *identity.Core
	WebAuthn *webauthnrp.Service
	// Links are the user's links to identity providers, and
	// ErrLastSignIn the refusal of Links.Unlink to remove the last way
	// to sign in.
	Links         Links
	ErrLastSignIn error
	// LinkNewScopes links the standard client scopes to a new client, the
	// account console (app/clients').
	LinkNewScopes func(ctx context.Context, tx *store.Store, c *store.Client) error
	// SignInLifetime is how long a sign-in the pages start may take: the
	// life of the cookie that carries its state.
	SignInLifetime time.Duration
	// Realm is the realm of an account path: an unknown or disabled one is
	// the not-found error of the protocol paths.
	Realm func(r *http.Request) (*store.Realm, error)
	// VerifyAccessToken checks an access token of the realm's OpenID
	// Connect provider and answers its claims.
	VerifyAccessToken func(ctx context.Context, realm *store.Realm, token string) (map[string]any, error)
	// SSOSession is the browser's SSO session of the realm and its user,
	// nil for none.
	SSOSession func(r *http.Request, realm *store.Realm) (*store.Session, *store.User, error)
	// SessionsEnded records the end of sessions (LOGOUT events) and sends
	// their clients back-channel logouts.
	SessionsEnded func(ctx context.Context, realm *store.Realm, ended []*store.Session, clientID string, details map[string]string)
	// QueueVerifyEmail queues the verify-email link's mail to u's address;
	// ErrMailUnavailable when the realm cannot send mail.
	QueueVerifyEmail func(r *http.Request, realm *store.Realm, u *store.User) error
	// LoginEvent records the account's login events: the changes a user
	// makes, the refusals of a locked user's credentials.
	LoginEvent func(ctx context.Context, realm *store.Realm, e store.LoginEvent)
	// ClientIP is the address of the request's client.
	ClientIP func(r *http.Request) string
	// WriteError answers an API caller's error in JSON.
	WriteError func(w http.ResponseWriter, r *http.Request, err error)
	// RenderPageError answers a browser's error with its page (a
	// signin.FormError's), else the error page.
	RenderPageError func(w http.ResponseWriter, r *http.Request, err error)
}

// ErrMailUnavailable: the realm has no way to send mail.
var ErrMailUnavailable = errors.New("the realm cannot send mail")

// Service is the account: its handlers, the callers they act for, and the
// job that deletes the accounts due.
type Service struct{ deps Deps }

// New builds the account module.
func New(d Deps) *Service { return &Service{deps: d} }

// Caller is who an account request acts for.
type Caller struct {
	Realm *store.Realm
	User  *store.User
	// Session is the browser's SSO session, or the session a token was
	// issued in (its sid); nil for a token without one.
	Session *store.Session
	// API is set for a Bearer caller: answers are JSON, forms need no
	// CSRF token (nothing is sent by the browser on its own).
	API bool
	// ClientID is the client acting for the user, for events: the
	// token's azp, or account-console for the pages.
	ClientID string
	// SID is a Bearer token's sid claim, "" when it has none; Session is
	// nil when that session has ended.
	SID string
	// AuthTime is when the user last authenticated, as far as the caller
	// shows (Unix milliseconds; 0 when unknown): the browser's SSO
	// session's, or the later of a token's auth_time and its session's.
	AuthTime int64
}

// SessionID is the caller's session for events, "" for none.
func (c *Caller) SessionID() string {
	if c.Session == nil {
		return ""
	}
	return c.Session.ID
}

// Handler serves one account route for an authenticated caller.
type Handler func(w http.ResponseWriter, r *http.Request, c *Caller) error

// ErrToken is a refused Bearer token on an account path.
var ErrToken = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeInvalidToken,
	Message: "the access token is invalid, expired or revoked"}

// ErrNoToken answers an account request that brings neither a token nor a
// browser's sign-in.
var ErrNoToken = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeUnauthorized,
	Message: "sign in first: send the user's access token (Authorization: Bearer <token>)"}

// The refusals of a step-up's caller (the step-up endpoints authenticate
// their callers as the account does), with a Bearer challenge each.
var (
	ErrStepUpNoToken = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeUnauthorized,
		Message: "send the user's access token: Authorization: Bearer <token>"}
	ErrStepUpEnded = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeInvalidToken,
		Message: "the access token's SSO session has ended: sign in again"}
)

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

// Bearer authenticates a Bearer caller: a valid, unrevoked access token
// of the realm whose user still exists and is enabled.
func (s *Service) Bearer(r *http.Request, realm *store.Realm, token string) (*Caller, error) {
	ctx := r.Context()
	claims, err := s.deps.VerifyAccessToken(ctx, realm, token)
	if err != nil {
		return nil, ErrToken
	}
	sub, _ := claims["sub"].(string)
	user, err := s.deps.Store.GetUser(ctx, realm.ID, sub)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!user.Enabled || user.ServiceAccountClientID != "") {
		return nil, ErrToken
	} else if err != nil {
		return nil, err
	}
	azp, _ := claims["azp"].(string)
	sid, _ := claims["sid"].(string)
	c := &Caller{Realm: realm, User: user, API: true, ClientID: azp, SID: sid}
	if at, ok := claims["auth_time"].(float64); ok {
		c.AuthTime = int64(at) * 1000
	}
	if sid != "" {
		sess, err := s.deps.Store.GetSession(ctx, realm.ID, sid)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if sess != nil && sess.UserID == user.ID && sess.Active(s.deps.Now().UnixMilli()) {
			c.Session = sess
			c.AuthTime = max(c.AuthTime, sess.AuthTime) // signed in again since the token was issued
		}
	}
	return c, nil
}

// Browser authenticates a browser by its SSO session; nil when it has
// none.
func (s *Service) Browser(r *http.Request, realm *store.Realm) (*Caller, error) {
	sess, user, err := s.deps.SSOSession(r, realm)
	if err != nil || sess == nil {
		return nil, err
	}
	return &Caller{Realm: realm, User: user, Session: sess, ClientID: ConsoleClientID, AuthTime: sess.AuthTime}, nil
}

// Realm loads the realm of an account path: unknown or disabled is a 404,
// as on every protocol path.
func (s *Service) Realm(r *http.Request) (*store.Realm, error) { return s.deps.Realm(r) }

// Path is where the account pages of a realm live.
func Path(realm *store.Realm) string { return "/realms/" + realm.Name + "/account" }

// issuer is the realm's OpenID Connect issuer, under which its protocol
// endpoints live.
func (s *Service) issuer(realm *store.Realm) string { return s.deps.BaseURL + "/realms/" + realm.Name }

// Handle wraps an account handler: a Bearer caller is authenticated by
// its token and answered in JSON; a browser by its SSO session, and one
// without is sent to sign in first when it navigates (browserNavigation);
// any other caller without either gets a 401 Bearer challenge. The
// handler returns its errors and this answers them in the caller's form:
// JSON for an API caller (writeError), a page for a browser
// (RenderPageError: the form again, or the error page). No answer is kept
// by any cache: every one is about a person, some hold secrets (a TOTP
// key, recovery codes, the data export).
func (s *Service) Handle(h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		// Until the caller is known: a token, or a request that is no
		// browser's navigation, is an API caller's.
		api := httpx.BearerToken(r) != "" || !browserNavigation(r)
		realm, err := s.Realm(r)
		if err == nil {
			r = signin.WithRealm(r, realm)
			signin.WearAccountTheme(r.Context())
			var c *Caller
			switch c, err = s.authenticate(r, realm); {
			case c != nil:
				api = c.API
				err = h(w, r, c)
			case err == nil:
				err = s.signIn(w, r, realm)
			}
		}
		switch {
		case err == nil:
		case api:
			s.writeError(w, r, err)
		default:
			s.deps.RenderPageError(w, r, err)
		}
	})
}

// authenticate is the caller of an account request: the user of its
// Bearer token, else of the browser's SSO session; nil for a browser that
// navigates without one, to be sent to sign in.
func (s *Service) authenticate(r *http.Request, realm *store.Realm) (*Caller, error) {
	if token := httpx.BearerToken(r); token != "" {
		return s.Bearer(r, realm, token)
	}
	c, err := s.Browser(r, realm)
	if err == nil && c == nil && !browserNavigation(r) {
		// An API caller without a token is told so (RFC 6750 §3.1),
		// never sent to a login page it cannot use.
		return nil, ErrNoToken
	}
	return c, err
}

// writeError answers an API caller of the account in JSON.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, err error) {
	SetBearerChallenge(w, signin.RealmFrom(r.Context()), err)
	s.deps.WriteError(w, r, err)
}

// SetBearerChallenge sets the WWW-Authenticate challenge of a Bearer
// caller refused for its credential: RFC 6750's for a missing or refused
// token, RFC 9470's for an authentication too old (the client can tell
// what to ask for). Other errors have none.
func SetBearerChallenge(w http.ResponseWriter, realm *store.Realm, err error) {
	if realm == nil {
		return
	}
	challenge := `Bearer realm="` + realm.Name + `"`
	switch {
	case errors.Is(err, ErrToken), errors.Is(err, ErrStepUpEnded):
		challenge += `, error="invalid_token"`
	case errors.Is(err, ErrNoToken), errors.Is(err, ErrStepUpNoToken):
	case errors.Is(err, ErrReauthRequired):
		challenge += `, error="insufficient_user_authentication", error_description="a recent authentication is required", max_age="0"`
	default:
		return
	}
	w.Header().Set("WWW-Authenticate", challenge)
}

// PagesOnly serves h to browsers alone: for an API caller, the route is
// not there.
func PagesOnly(h Handler) Handler {
	return func(w http.ResponseWriter, r *http.Request, c *Caller) error {
		if c.API {
			return apperr.NotFound("page")
		}
		return h(w, r, c)
	}
}
