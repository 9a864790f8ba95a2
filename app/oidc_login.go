package app

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/ui"
)

// Why a user's credentials were refused. The first covers an unknown
// user, a wrong password and an account that cannot sign in by password,
// so that the answer never tells whether a user exists.
var (
	errBadCredentials = errors.New("invalid username or password")
	errUserDisabled   = errors.New("account disabled")
)

// throttledError: too many failed sign-ins for this user or address.
type throttledError struct{ wait time.Duration }

func (e *throttledError) Error() string { return "too many failed sign-ins" }

// checkCredentials authenticates a user of the realm by password. Failed
// attempts are throttled per user and per address, as admin logins are.
func (a *App) checkCredentials(ctx context.Context, realm *store.Realm, username, password, ip string) (*store.User, error) {
	userKey := "realm:" + realm.ID + ":user:" + strings.ToLower(username)
	ipKey := "realm:" + realm.ID + ":ip:" + ip
	if wait := max(a.loginThrottle.wait(userKey, loginLimitPerUser), a.loginThrottle.wait(ipKey, loginLimitPerIP)); wait > 0 {
		return nil, &throttledError{wait: wait}
	}
	user, err := a.store.GetUserByUsername(ctx, realm.ID, username)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	hash := dummyArgon2Hash // verify against something, so unknown users take as long
	if user != nil && user.PasswordHash != "" && user.ServiceAccountClientID == "" {
		hash = user.PasswordHash
	}
	ok, err := a.verifyPassword(ctx, hash, password)
	if err != nil && !errors.Is(err, errBadHash) {
		return nil, err
	}
	if ok && user != nil && hash != dummyArgon2Hash {
		// A registration awaiting approval, or rejected, fails as a wrong
		// password would: the answer says nothing about the account.
		status, err := a.store.UserStatus(ctx, realm.ID, user.ID)
		if err != nil {
			return nil, err
		}
		ok = status == store.UserActive
	}
	if user == nil || hash == dummyArgon2Hash || !ok {
		a.loginThrottle.fail(userKey)
		a.loginThrottle.fail(ipKey)
		return nil, errBadCredentials
	}
	a.loginThrottle.reset(userKey)
	if !user.Enabled {
		return nil, errUserDisabled
	}
	return user, nil
}

// loginPage shows the sign-in form of a pending authorization request.
func (a *App) loginPage(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	ar, client, err := a.pageAuthRequest(r.Context(), realm, r.URL.Query().Get("authRequestID"), false)
	if err != nil {
		return err
	}
	return a.renderLogin(w, r, realm, client, ar, http.StatusOK, ar.LoginHint, "")
}

func (a *App) renderLogin(w http.ResponseWriter, r *http.Request, realm *store.Realm, client *store.Client, ar *store.AuthRequest, status int, username, message string) error {
	return a.renderLoginWith(w, r, realm, client, ar, status, ui.LoginForm{Username: username, Error: message})
}

// login takes the sign-in form: on success the browser gets an SSO
// session and the request goes on to consent or back to the client; on
// failure the form comes back with a message that names no cause a
// stranger could learn from.
func (a *App) login(w http.ResponseWriter, r *http.Request, realm *store.Realm) error {
	if err := r.ParseForm(); err != nil {
		return badPage("The sign-in form could not be read.")
	}
	ctx := r.Context()
	ar, client, err := a.pageAuthRequest(ctx, realm, r.PostForm.Get("authRequestID"), false)
	if err != nil {
		return err
	}
	if err := a.checkCSRF(r, "login", ar.ID); err != nil {
		return err
	}
	username, password := strings.TrimSpace(r.PostForm.Get("username")), r.PostForm.Get("password")
	if username == "" || password == "" {
		return a.renderLogin(w, r, realm, client, ar, http.StatusBadRequest, username, "Enter your username and password.")
	}
	user, err := a.checkCredentials(ctx, realm, username, password, clientIP(r))
	if reason := loginErrorReason(err); reason != "" {
		a.loginEvent(ctx, realm, store.LoginEvent{Type: "LOGIN_ERROR", ClientID: client.ClientID, IPAddress: clientIP(r),
			Error: reason, Details: map[string]string{"username": username}})
	}
	var throttled *throttledError
	switch {
	case errors.Is(err, errBadCredentials):
		return a.renderLogin(w, r, realm, client, ar, http.StatusUnauthorized, username, "Invalid username or password.")
	case errors.Is(err, errUserDisabled):
		// Only said to someone who knows the password.
		return a.renderLogin(w, r, realm, client, ar, http.StatusForbidden, username, "This account is disabled.")
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(throttled.wait.Seconds()))))
		return a.renderLogin(w, r, realm, client, ar, http.StatusTooManyRequests, username,
			"Too many failed sign-ins. Try again later.")
	case err != nil:
		return err
	}
	if realm.RequireEmailVerification && !user.EmailVerified {
		return a.refuseUnverified(w, r, realm, client, ar, user, username)
	}
	if pending, err := a.startSecondFactor(w, r, realm, ar, user); pending || err != nil {
		return err
	}
	return a.finishSignIn(w, r, realm, client, ar, user, []string{amrPassword}, nil)
}
