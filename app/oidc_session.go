package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// SSO sessions. A browser that signed in to a realm holds a cookie whose
// value is a random secret; the session row's ID is a hash of it. Tokens
// carry that ID as sid, and the ID cannot be turned back into the cookie,
// so a client that sees a sid cannot take over the browser's session.

const (
	ssoCookiePrefix = "idenplane_sso_"
	// ssoMaxLifespan caps an SSO session however active it stays:
	// Keycloak's default SSO Session Max. Its idle timeout is the realm's
	// refreshTokenLifespan, whose default is Keycloak's SSO Session Idle.
	ssoMaxLifespan = 10 * time.Hour
)

// amrPassword is how a password login authenticates (RFC 8176).
const amrPassword = "pwd"

func ssoCookieName(realm *store.Realm) string { return ssoCookiePrefix + realm.Name }

// ssoSessionID is the ID of the session whose cookie holds secret.
func ssoSessionID(secret string) string {
	return uuid.NewHash(sha256.New(), uuid.Nil, []byte(secret), 8).String()
}

// randomToken is 256 random bits, URL-safe: codes, refresh tokens, cookies.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails: crypto/rand panics rather than return an error
	return base64.RawURLEncoding.EncodeToString(b)
}

// ssoExpiry is when the SSO session sso, used at now, expires: after the
// realm's idle time, and never past its maximum.
func ssoExpiry(realm *store.Realm, sso *store.Session, now int64) int64 {
	idle := now + int64(realm.RefreshTokenLifespan)*1000
	return min(idle, ssoMaxEnd(sso))
}

// ssoMaxEnd is when the SSO session sso ends however active it stays: at
// its maximum lifespan, or an impersonation's earlier end.
func ssoMaxEnd(sso *store.Session) int64 {
	end := sso.StartedAt + ssoMaxLifespan.Milliseconds()
	if sso.Impersonator != nil {
		end = min(end, sso.Impersonator.EndsAt)
	}
	return end
}

// ssoSession is the browser's live SSO session in the realm and its
// user, or nil for both when it has none: no cookie, an ended session, or
// a user since disabled.
func (a *App) ssoSession(r *http.Request, realm *store.Realm) (*store.Session, *store.User, error) {
	c, err := r.Cookie(ssoCookieName(realm))
	if err != nil || c.Value == "" {
		return nil, nil, nil
	}
	sess, err := a.store.GetSession(r.Context(), realm.ID, ssoSessionID(c.Value))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	if sess.Kind != store.SessionSSO || !sess.Active(a.now().UnixMilli()) {
		return nil, nil, nil
	}
	user, err := a.store.GetUser(r.Context(), realm.ID, sess.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	if !user.Enabled {
		return nil, nil, nil
	}
	return sess, user, nil
}

// NewSSOSession is a new SSO session of user, authenticated by password
// at now (Unix milliseconds).
func NewSSOSession(realm *store.Realm, user *store.User, id, ip string, now int64) *store.Session {
	s := &store.Session{ID: id, RealmID: realm.ID, UserID: user.ID, Kind: store.SessionSSO,
		IPAddress: ip, StartedAt: now, LastAccessAt: now, AuthTime: now, AMR: []string{amrPassword}}
	s.ExpiresAt = ssoExpiry(realm, s, now)
	return s
}

// ssoLogin is the SSO session a password login in a browser lands in:
// the browser's own when it already belongs to the user, else a new one,
// whose cookie replaces the old.
type ssoLogin struct {
	sess   *store.Session
	secret string // the browser's cookie: the new session's, or the one it holds
	reused bool   // the browser's session, signed in again
}

func (a *App) planSSOLogin(r *http.Request, realm *store.Realm, user *store.User) (*ssoLogin, error) {
	now := a.now().UnixMilli()
	current, currentUser, err := a.ssoSession(r, realm)
	if err != nil {
		return nil, err
	}
	if current != nil && currentUser.ID == user.ID {
		c, err := r.Cookie(ssoCookieName(realm))
		if err != nil {
			return nil, err // ssoSession found the session by this cookie
		}
		current.AuthTime, current.AMR, current.LastAccessAt = now, []string{amrPassword}, now
		current.ExpiresAt = ssoExpiry(realm, current, now)
		return &ssoLogin{sess: current, secret: c.Value, reused: true}, nil
	}
	return a.newSSOLogin(r, realm, user), nil
}

// newSSOLogin is a login into a new SSO session, whatever the browser has.
func (a *App) newSSOLogin(r *http.Request, realm *store.Realm, user *store.User) *ssoLogin {
	secret := randomToken()
	return &ssoLogin{sess: NewSSOSession(realm, user, ssoSessionID(secret), a.clientIP(r), a.now().UnixMilli()), secret: secret}
}

// write stores the login, inside the caller's transaction.
func (l *ssoLogin) write(ctx context.Context, tx *store.Store) error {
	if l.reused {
		s := l.sess
		return tx.ReauthenticateSession(ctx, s.RealmID, s.ID, s.AuthTime, s.AMR, s.LastAccessAt, s.ExpiresAt)
	}
	return tx.CreateSession(ctx, l.sess)
}

// setSSOCookie gives the browser the cookie of its session. Without
// "remember me" it is a browser-session cookie, gone when the browser
// closes; with it, it persists until the SSO session's maximum lifespan,
// as Keycloak's does. Set on every login, so that the latest choice holds.
func (a *App) setSSOCookie(w http.ResponseWriter, realm *store.Realm, l *ssoLogin, remember bool) {
	c := a.pages.Cookie(realm, ssoCookieName(realm), l.secret)
	if remember {
		until := time.UnixMilli(l.sess.StartedAt).Add(ssoMaxLifespan)
		c.Expires = until.UTC()
		c.MaxAge = max(1, int(math.Ceil(until.Sub(a.now()).Seconds())))
	}
	http.SetCookie(w, c)
}
