package console

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	pages "github.com/idenplane/idenplane/ui/console"
)

// The console's addresses outside its pages.
const (
	pathCallback  = Prefix + "/callback"
	pathSignedOut = Prefix + "/signed-out"
)

func (s *Service) redirectURI() string { return s.deps.BaseURL + pathCallback }

// Login starts a sign-in: the browser goes to the system realm's
// authorization endpoint with a PKCE challenge, and the state of the
// sign-in stays sealed in a cookie until the callback.
func (s *Service) Login(w http.ResponseWriter, r *http.Request) {
	in := signin{State: randomToken(), Verifier: randomToken(), Return: safeReturn(r.URL.Query().Get("return")),
		Until: s.deps.Now().Add(signinLifetime).Unix()}
	if err := s.writeSealed(w, r, signinCookie, in, int(signinLifetime.Seconds())); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	challenge := sha256.Sum256([]byte(in.Verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {s.deps.ClientID},
		"redirect_uri":          {s.redirectURI()},
		"scope":                 {"openid profile email"},
		"state":                 {in.State},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(challenge[:])},
		"code_challenge_method": {"S256"},
	}
	if l := r.URL.Query().Get("ui_locales"); l != "" {
		q.Set("ui_locales", l)
	}
	target := s.deps.BaseURL + "/realms/" + url.PathEscape(s.deps.SystemRealm) + "/protocol/openid-connect/auth?" + q.Encode()
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// safeReturn keeps a page of the console to come back to, and nothing
// else: never another site.
func safeReturn(v string) string {
	if !strings.HasPrefix(v, Prefix+"/") || strings.HasPrefix(v, "//") || strings.ContainsAny(v, "\\\r\n") {
		return Prefix + "/"
	}
	return v
}

// Callback ends a sign-in: the state must be the sealed one, the code is
// exchanged in process with the PKCE verifier, and the session starts.
func (s *Service) Callback(w http.ResponseWriter, r *http.Request) {
	var in signin
	err := s.readSealed(r, signinCookie, &in)
	s.clearSealed(w, r, signinCookie)
	q := r.URL.Query()
	switch {
	case err != nil || s.deps.Now().Unix() >= in.Until:
		s.fail(w, r, nil, &pages.Failure{Status: http.StatusBadRequest, Message: "console.error.signinExpired", Back: Prefix + "/login"})
		return
	case q.Get("state") == "" || q.Get("state") != in.State:
		s.fail(w, r, nil, &pages.Failure{Status: http.StatusBadRequest, Message: "console.error.signinState", Back: Prefix + "/login"})
		return
	case q.Get("error") != "":
		s.fail(w, r, nil, &pages.Failure{Status: http.StatusForbidden, Message: "console.error.signinRefused", Back: Prefix + "/login"})
		return
	}
	tr, err := s.token(r, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")},
		"redirect_uri": {s.redirectURI()}, "code_verifier": {in.Verifier}})
	if err != nil {
		s.deps.Log.InfoContext(r.Context(), "console sign-in: code exchange refused", "err", err)
		s.fail(w, r, nil, &pages.Failure{Status: http.StatusBadRequest, Message: "console.error.signinRefused", Back: Prefix + "/login"})
		return
	}
	now := s.deps.Now()
	sess := &session{AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken, Expires: now.Unix() + tr.ExpiresIn,
		Until: now.Add(sessionLifetime).Unix(), CSRF: randomToken()}
	var who me
	if err := s.call(r, sess, http.MethodGet, "/admin/auth/me", nil, &who); err != nil {
		// A person of the system realm who is no administrator.
		s.deps.Log.InfoContext(r.Context(), "console sign-in: not an administrator", "err", err)
		s.fail(w, r, nil, &pages.Failure{Status: http.StatusForbidden, Message: "console.error.notAdmin", Back: pathSignedOut})
		return
	}
	sess.Username = who.Username
	if err := s.writeSealed(w, r, sessionCookie, sess, 0); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, in.Return, http.StatusSeeOther)
}

// refresh replaces an access token about to expire, in process.
func (s *Service) refresh(r *http.Request, sess *session) error {
	if s.deps.Now().Unix()+refreshMargin < sess.Expires {
		return nil
	}
	tr, err := s.token(r, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {sess.RefreshToken}})
	if err != nil {
		return err
	}
	sess.AccessToken, sess.Expires, sess.changed = tr.AccessToken, s.deps.Now().Unix()+tr.ExpiresIn, true
	if tr.RefreshToken != "" {
		sess.RefreshToken = tr.RefreshToken
	}
	return nil
}

// Logout ends the session at the system realm (its refresh token's SSO
// session, in process) and in the browser.
func (s *Service) Logout(w http.ResponseWriter, r *http.Request, c *Ctx) error {
	rec, err := s.protocol(r, "logout", url.Values{"client_id": {s.deps.ClientID}, "refresh_token": {c.sess.RefreshToken}})
	if err != nil {
		return err
	}
	if rec.result() != http.StatusNoContent {
		s.deps.Log.InfoContext(r.Context(), "console sign-out: the session had ended", "status", rec.result())
	}
	s.clearSealed(w, r, sessionCookie)
	http.Redirect(w, r, pathSignedOut, http.StatusSeeOther)
	return nil
}

// SignedOut is the page after a sign-out, with a way back in.
func (s *Service) SignedOut(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.RenderPage(w, r, http.StatusOK, pages.SignedOut(s.bareNav("console.signedOut.title"))); err != nil {
		s.deps.Log.ErrorContext(r.Context(), "render console page", "err", err)
	}
}

// Root sends /console to the dashboard.
func (s *Service) Root(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}
