package app

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/signin"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Logout: RP-initiated (OpenID Connect RP-Initiated Logout 1.0), by
// refresh token, and back-channel logout received (oidc_backchannel.go).
// The provider answers these itself, ahead of the library, whose
// EndSession can only redirect: no confirmation page, no HTML errors.

const pathBackchannelLogout = pathLogout + "/backchannel"

// logoutEndpoints serves the logout requests and passes every other
// protocol request to lib. Requests arrive as protocolRoutes leaves them:
// realm in the context, path relative to the issuer.
func (a *App) logoutEndpoints(lib http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/"+pathLogout && r.Method == http.MethodPost && isTokenLogout(r):
			a.tokenLogout(w, r)
		case r.URL.Path == "/"+pathLogout && (r.Method == http.MethodGet || r.Method == http.MethodPost):
			a.rpLogout(w, r)
		case r.URL.Path == "/"+pathBackchannelLogout && r.Method == http.MethodPost:
			a.backchannelLogoutIn(w, r)
		default:
			lib.ServeHTTP(w, r)
		}
	})
}

// isTokenLogout tells a client's logout by refresh token from a browser's
// logout form: the client sends its token or its credentials.
func isTokenLogout(r *http.Request) bool {
	return r.PostFormValue("refresh_token") != "" || r.Header.Get("Authorization") != ""
}

// tokenLogout ends the session of a refresh token of the calling client,
// which authenticates as at the token endpoint, and revokes the token's
// family. 204; a token that is not a live one of this client and realm is
// invalid_grant.
func (a *App) tokenLogout(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	realm := signin.RealmFrom(ctx)
	err := func() error {
		if err := r.ParseForm(); err != nil {
			return oidc.ErrInvalidRequest().WithDescription("the form could not be read")
		}
		id, secret, err := formClientCredentials(r)
		if err != nil {
			return err
		}
		c, err := a.authenticateClient(ctx, realm, id, secret)
		if err != nil {
			return err
		}
		token := r.PostFormValue("refresh_token")
		if token == "" {
			return oidc.ErrInvalidRequest().WithDescription("refresh_token is required")
		}
		rt, ended, err := a.store.LogoutRefreshToken(ctx, realm.ID, store.HashToken(token), c.ID, a.now().UnixMilli())
		if errors.Is(err, store.ErrNotFound) {
			a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLogoutError, ClientID: c.ClientID, Error: "invalid_grant"})
			return oidc.ErrInvalidGrant().WithDescription("invalid refresh token")
		} else if err != nil {
			return err
		}
		if len(ended) == 0 {
			// The session had already expired: the token is revoked, and
			// that is the whole logout.
			a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLogout, UserID: rt.UserID, ClientID: c.ClientID,
				SessionID: rt.SessionID})
		}
		a.loggedOut(ctx, realm, ended, c.ClientID, nil)
		return nil
	}()
	if err != nil {
		op.WriteError(w, r, a.protocolError(ctx, err), nil)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// logoutRefusal is a logout request refused with an HTML page: its text
// is shown to the user.
type logoutRefusal string

func (e logoutRefusal) Error() string { return string(e) }

// rpLogout is RP-initiated logout, by GET or by a form POST. With a valid
// id_token_hint it ends the session at once; without, it asks the browser
// to confirm, and the confirmation comes back here with its CSRF token.
func (a *App) rpLogout(w http.ResponseWriter, r *http.Request) {
	realm := signin.RealmFrom(r.Context())
	r = signin.WithRealm(r, realm)
	ctx := r.Context()
	err := a.rpLogoutStep(w, r, realm)
	var refusal logoutRefusal
	switch {
	case err == nil:
		return
	case errors.As(err, &refusal):
		a.log.DebugContext(ctx, "logout refused", "realm", realm.Name, "err", err)
		a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLogoutError, ClientID: r.Form.Get("client_id"),
			Error: "invalid_request", Details: map[string]string{"reason": string(refusal)}})
		err = a.pages.Render(w, r, http.StatusBadRequest, ui.LogoutError(a.pages.Page("logout.title"), string(refusal)))
	default:
		e, key := a.pageFailure(w, r, err)
		err = a.pages.Render(w, r, e.Status, ui.LogoutError(a.pages.Page("logout.title"), key))
	}
	if err != nil {
		a.log.ErrorContext(ctx, "render logout page", "err", err)
	}
}

// logoutRequest is an RP-initiated logout request, checked.
type logoutRequest struct {
	hint     *idTokenHint // nil without id_token_hint
	clientID string       // from the hint or client_id; "" for none
	redirect string       // post_logout_redirect_uri, registered for the client; "" for none
	state    string
}

// readLogoutRequest checks the hint and the redirect URI. The URI must be
// one the client registered, exactly: anything else is refused, never
// followed.
func (a *App) readLogoutRequest(ctx context.Context, realm *store.Realm, form url.Values) (*logoutRequest, error) {
	lr := &logoutRequest{clientID: form.Get("client_id"), redirect: form.Get("post_logout_redirect_uri"), state: form.Get("state")}
	if raw := form.Get("id_token_hint"); raw != "" {
		hint, err := a.verifyIDTokenHint(ctx, realm, raw)
		if errors.Is(err, errInvalidJWT) {
			a.log.DebugContext(ctx, "id_token_hint refused", "err", err)
			return nil, logoutRefusal("logout.error.badHint")
		} else if err != nil {
			return nil, err
		}
		if lr.clientID != "" && lr.clientID != hint.client.ClientID {
			return nil, logoutRefusal("logout.error.clientMismatch")
		}
		lr.hint, lr.clientID = hint, hint.client.ClientID
	}
	if lr.redirect == "" {
		return lr, nil
	}
	// Without a client there is nothing to check the URI against.
	if lr.clientID == "" {
		return nil, logoutRefusal("logout.error.noClient")
	}
	c, err := a.store.GetClientByClientID(ctx, realm.ID, lr.clientID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !c.Enabled) {
		return nil, logoutRefusal("logout.error.unknownClient")
	} else if err != nil {
		return nil, err
	}
	if !slices.Contains(c.RedirectURIs, lr.redirect) {
		return nil, logoutRefusal("logout.error.badRedirect")
	}
	return lr, nil
}

func (a *App) rpLogoutStep(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ctx := r.Context()
	if err := r.ParseForm(); err != nil {
		return logoutRefusal("logout.error.malformed")
	}
	form := r.Form // the query, and for a POST its form too
	lr, err := a.readLogoutRequest(ctx, realm, form)
	if err != nil {
		return err
	}
	current, err := a.ssoSessionFromRequest(r, realm)
	if err != nil {
		return err
	}
	var targets []string
	switch {
	case lr.hint != nil:
		if targets, err = a.hintedSessions(ctx, realm, lr.hint, current); err != nil {
			return err
		}
	case r.Method == http.MethodPost && form.Has("csrf_token"):
		if current == nil {
			break // ended meanwhile: nothing left to do
		}
		if !a.checkLogoutCSRF(form.Get("csrf_token"), realm, current.ID) {
			return logoutRefusal("logout.error.formExpired")
		}
		targets = []string{current.ID}
	case current != nil:
		signin.FormsLeaveServer(r.Context())
		return a.pages.Render(w, r, http.StatusOK, ui.LogoutConfirm(a.pages.Page("logout.title"), identity.RealmTitle(realm), ui.LogoutForm{
			Action:    "/realms/" + realm.Name + "/" + pathLogout,
			CSRFToken: a.logoutCSRF(realm, current.ID, a.now().Add(logoutCSRFLifetime)),
			ClientID:  lr.clientID, PostLogoutRedirectURI: lr.redirect, State: lr.state,
		}))
	}
	// The browser's own session, signed in through a provider that signs
	// out upstream, takes the browser there before it goes on; what the
	// session knows of its upstream goes with it, so it is read first.
	var upstream *store.BrokerSession
	if current != nil && slices.Contains(targets, current.ID) {
		upstream, err = a.store.GetBrokerSession(ctx, current.ID)
		if errors.Is(err, store.ErrNotFound) {
			upstream = nil
		} else if err != nil {
			return err
		}
	}
	var ended []*store.Session
	for _, id := range targets {
		s, err := a.store.DeleteSession(ctx, realm.ID, id, store.SessionSSO, a.now().UnixMilli())
		if errors.Is(err, store.ErrNotFound) {
			continue // ended meanwhile
		} else if err != nil {
			return err
		}
		ended = append(ended, s...)
	}
	// The cookie goes with its session, or when it names none that is
	// live; the session of another user than the hinted one stays.
	if current == nil || slices.Contains(targets, current.ID) {
		expireSSOCookie(w, a.cfg.BaseURL, realm)
	}
	var details map[string]string
	if lr.redirect != "" {
		details = map[string]string{"redirect_uri": lr.redirect}
	}
	a.loggedOut(ctx, realm, ended, lr.clientID, details)
	if upstream != nil {
		then := ""
		if lr.redirect != "" {
			then = withState(lr.redirect, lr.state)
		}
		to, err := a.broker.UpstreamLogoutURL(ctx, realm, upstream, then)
		if err != nil {
			return err
		}
		if to != "" {
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, to, http.StatusFound)
			return nil
		}
	}
	if lr.redirect == "" {
		return a.pages.Render(w, r, http.StatusOK, ui.LoggedOut(a.pages.Page("logout.done.title"), identity.RealmTitle(realm)))
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, withState(lr.redirect, lr.state), http.StatusFound)
	return nil
}

// hintedSessions are the SSO sessions an id_token_hint asks to end: the
// one its sid names and the browser's own, each only if it is the hinted
// user's.
func (a *App) hintedSessions(ctx context.Context, realm *store.Realm, hint *idTokenHint, current *store.Session) ([]string, error) {
	var out []string
	if hint.sid != "" {
		s, err := a.store.GetSession(ctx, realm.ID, hint.sid)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		case s.Kind == store.SessionSSO && s.UserID == hint.subject:
			out = append(out, s.ID)
		}
	}
	if current != nil && current.UserID == hint.subject && !slices.Contains(out, current.ID) {
		out = append(out, current.ID)
	}
	return out, nil
}

// loggedOut records the end of the sessions a logout ended, the SSO or
// offline ones the user sees, and tells their clients by back channel.
func (a *App) loggedOut(ctx context.Context, realm *store.Realm, ended []*store.Session, clientID string, details map[string]string) {
	for _, s := range ended {
		if s.ParentID == "" {
			a.loginEvent(ctx, realm, store.LoginEvent{Type: store.EventLogout, UserID: s.UserID, SessionID: s.ID,
				ClientID: clientID, Details: details})
		}
	}
	a.backchannelLogout(ctx, realm, ended)
}

// withState appends the RP's state to its post-logout redirect URI.
func withState(uri, state string) string {
	if state == "" {
		return uri
	}
	u, err := url.Parse(uri)
	if err != nil {
		return uri // registered URIs parse; this is not reached
	}
	q := u.Query()
	q.Set("state", state)
	u.RawQuery = q.Encode()
	return u.String()
}

// idTokenHint is what a verified id_token_hint tells.
type idTokenHint struct {
	subject string
	sid     string
	client  *store.Client
}

// verifyIDTokenHint checks that raw is an ID token of this realm: signed
// by one of its published keys, its issuer, for one of its clients. An
// expired one is accepted, as RP-Initiated Logout §2 allows: the user may
// well log out long after signing in.
func (a *App) verifyIDTokenHint(ctx context.Context, realm *store.Realm, raw string) (*idTokenHint, error) {
	var claims struct {
		Issuer   string       `json:"iss"`
		Subject  string       `json:"sub"`
		Audience jwt.Audience `json:"aud"`
		AZP      string       `json:"azp"`
		SID      string       `json:"sid"`
	}
	if err := a.verifyRealmJWT(ctx, realm, raw, []string{"", "JWT"}, &claims); err != nil {
		return nil, err
	}
	if claims.Issuer != a.issuer(realm) {
		return nil, fmt.Errorf("%w: issuer %q is not the realm's", errInvalidJWT, claims.Issuer)
	}
	if claims.Subject == "" {
		return nil, fmt.Errorf("%w: no subject", errInvalidJWT)
	}
	c, err := a.audienceClient(ctx, realm, claims.Audience, claims.AZP)
	if errors.Is(err, errNoAudienceClient) {
		return nil, fmt.Errorf("%w: %w", errInvalidJWT, err)
	} else if err != nil {
		return nil, err
	}
	return &idTokenHint{subject: claims.Subject, sid: claims.SID, client: c}, nil
}

// audienceClient is the client of the realm a token is for: its azp when
// it names one of its audiences, else the first audience that is a client.
func (a *App) audienceClient(ctx context.Context, realm *store.Realm, aud jwt.Audience, azp string) (*store.Client, error) {
	candidates := []string(aud)
	if azp != "" {
		if !aud.Contains(azp) {
			return nil, fmt.Errorf("azp %q is not among the audiences: %w", azp, errNoAudienceClient)
		}
		candidates = []string{azp}
	}
	for _, id := range candidates {
		c, err := a.store.GetClientByClientID(ctx, realm.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fmt.Errorf("audiences %v: %w", []string(aud), errNoAudienceClient)
}

var errNoAudienceClient = errors.New("no audience is a client of the realm")

// errInvalidJWT marks a token refused for what it is, as opposed to a
// failure to check it.
var errInvalidJWT = errors.New("invalid token")

// verifyRealmJWT checks raw's signature against the realm's published keys
// and its typ header against typs ("" for none), and decodes its claims
// into dst. The claims themselves are the caller's to check.
func (a *App) verifyRealmJWT(ctx context.Context, realm *store.Realm, raw string, typs []string, dst ...any) error {
	parsed, err := jwt.ParseSigned(raw, signingAlgorithms)
	if err != nil {
		return fmt.Errorf("%w: %w", errInvalidJWT, err)
	}
	if len(parsed.Headers) != 1 {
		return fmt.Errorf("%w: not a single-signature JWT", errInvalidJWT)
	}
	typ, _ := parsed.Headers[0].ExtraHeaders[jose.HeaderType].(string)
	if !slices.Contains(typs, typ) {
		return fmt.Errorf("%w: typ %q is not one of %q", errInvalidJWT, typ, typs)
	}
	keys, err := a.signingKeys.Public(ctx, realm)
	if err != nil {
		return err
	}
	kid := parsed.Headers[0].KeyID
	i := slices.IndexFunc(keys, func(k jose.JSONWebKey) bool { return k.KeyID == kid })
	if i < 0 {
		return fmt.Errorf("%w: unknown key %q", errInvalidJWT, kid)
	}
	if err := parsed.Claims(keys[i].Key, dst...); err != nil {
		return fmt.Errorf("%w: %w", errInvalidJWT, err)
	}
	return nil
}

// The confirmation form's CSRF token is an HMAC of the realm, the SSO
// session the form would end and an expiry: only a page this server
// rendered for this browser's session has it, and nothing is stored.
const logoutCSRFLifetime = 10 * time.Minute

func (a *App) logoutCSRFKey() []byte {
	// HKDF fails only for lengths beyond 255 hash outputs.
	key, _ := hkdf.Key(sha256.New, a.cfg.MasterKey, nil, "idenplane logout confirmation", 32)
	return key
}

func (a *App) logoutCSRFMAC(realm *store.Realm, sessionID string, exp int64) []byte {
	mac := hmac.New(sha256.New, a.logoutCSRFKey())
	fmt.Fprintf(mac, "%s\x00%s\x00%d", realm.ID, sessionID, exp)
	return mac.Sum(nil)
}

func (a *App) logoutCSRF(realm *store.Realm, sessionID string, exp time.Time) string {
	return strconv.FormatInt(exp.Unix(), 10) + "." +
		base64.RawURLEncoding.EncodeToString(a.logoutCSRFMAC(realm, sessionID, exp.Unix()))
}

func (a *App) checkLogoutCSRF(token string, realm *store.Realm, sessionID string) bool {
	expText, macText, ok := strings.Cut(token, ".")
	exp, err := strconv.ParseInt(expText, 10, 64)
	if !ok || err != nil || a.now().Unix() >= exp {
		return false
	}
	mac, err := base64.RawURLEncoding.DecodeString(macText)
	return err == nil && hmac.Equal(mac, a.logoutCSRFMAC(realm, sessionID, exp))
}

// ssoSessionFromRequest is the browser's live SSO session in the realm,
// or nil when it has none.
func (a *App) ssoSessionFromRequest(r *http.Request, realm *store.Realm) (*store.Session, error) {
	sess, _, err := a.ssoSession(r, realm)
	return sess, err
}

// expireSSOCookie tells the browser to forget its SSO cookie.
func expireSSOCookie(w http.ResponseWriter, baseURL string, realm *store.Realm) {
	http.SetCookie(w, &http.Cookie{Name: ssoCookieName(realm), Value: "", Path: "/realms/" + realm.Name + "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(baseURL, "https://")})
}
