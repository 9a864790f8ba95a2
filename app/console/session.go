package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"time"
)

const (
	sessionCookie = "idenplane_console"
	signinCookie  = "idenplane_console_signin"
	// cookieChunk is the most of a sealed value one cookie carries:
	// browsers keep about 4 KB per cookie, and the session holds two tokens.
	cookieChunk = 3500
	maxChunks   = 4
	// sessionLifetime bounds a console session whatever its tokens say.
	sessionLifetime = 12 * time.Hour
	signinLifetime  = 10 * time.Minute
)

// session is a signed-in administrator's console session: the system
// realm's tokens issued to the console, and the CSRF token of its forms.
type session struct {
	AccessToken  string `json:"at"`
	RefreshToken string `json:"rt"`
	Expires      int64  `json:"exp"`  // the access token's expiry, Unix seconds
	Until        int64  `json:"till"` // the session's end, Unix seconds
	CSRF         string `json:"csrf"`
	Username     string `json:"user"`
	// changed marks a session whose tokens were refreshed while serving
	// the request, to be written back.
	changed bool
}

// signin is the state of a sign-in under way, between the redirect to
// the authorization endpoint and the callback.
type signin struct {
	State    string `json:"state"`
	Verifier string `json:"verifier"`
	Return   string `json:"return"`
	Until    int64  `json:"till"`
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Service) cookieBase(name string) *http.Cookie {
	return &http.Cookie{Name: name, Path: Prefix + "/", HttpOnly: true, Secure: s.deps.SecureCookies,
		SameSite: http.SameSiteLaxMode}
}

// writeSealed sets the cookies that carry v, split in chunks, and clears
// the chunks a longer value left before.
func (s *Service) writeSealed(w http.ResponseWriter, r *http.Request, name string, v any, maxAge int) error {
	value, err := s.cookie.seal(name, v)
	if err != nil {
		return err
	}
	n := 0
	for ; len(value) > 0; n++ {
		part := value[:min(cookieChunk, len(value))]
		value = value[len(part):]
		c := s.cookieBase(chunkName(name, n))
		c.Value, c.MaxAge = part, maxAge
		http.SetCookie(w, c)
	}
	for ; n < maxChunks; n++ {
		if _, err := r.Cookie(chunkName(name, n)); err == nil {
			s.clearCookie(w, chunkName(name, n))
		}
	}
	return nil
}

func (s *Service) readSealed(r *http.Request, name string, v any) error {
	var value string
	for n := range maxChunks {
		c, err := r.Cookie(chunkName(name, n))
		if err != nil {
			break
		}
		value += c.Value
	}
	if value == "" {
		return errBadSeal
	}
	return s.cookie.open(name, value, v)
}

func (s *Service) clearSealed(w http.ResponseWriter, r *http.Request, name string) {
	for n := range maxChunks {
		if _, err := r.Cookie(chunkName(name, n)); err == nil {
			s.clearCookie(w, chunkName(name, n))
		}
	}
}

func (s *Service) clearCookie(w http.ResponseWriter, name string) {
	c := s.cookieBase(name)
	c.MaxAge = -1
	http.SetCookie(w, c)
}

func chunkName(name string, n int) string {
	if n == 0 {
		return name
	}
	return name + "_" + strconv.Itoa(n)
}

// currentSession is the request's console session, or nil when there is
// none, it does not open, or it has ended.
func (s *Service) currentSession(r *http.Request) *session {
	var sess session
	if err := s.readSealed(r, sessionCookie, &sess); err != nil {
		return nil
	}
	if s.deps.Now().Unix() >= sess.Until || sess.CSRF == "" || sess.AccessToken == "" {
		return nil
	}
	return &sess
}

// checkCSRF says whether the form's token is the session's.
func (sess *session) checkCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(sess.CSRF)) == 1
}
