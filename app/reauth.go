package app

import (
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
)

// Registering or removing a second factor asks for a recent
// authentication, as Keycloak's credential setup does: whoever holds a
// user's access token, or sits at a browser left signed in, must not be
// able to put a factor of their own on the account, or take the user's
// off, without proving the user's credentials again. TOTP removal asks
// for a code or the password in the request itself instead.

// reauthMaxAge is how old the authentication may be.
const reauthMaxAge = 5 * time.Minute

// errReauthRequired answers a Bearer caller whose authentication is older.
var errReauthRequired = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeReauthRequired,
	Message: "registering or removing a second factor needs an authentication at most 5 minutes old: " +
		"sign the user in again (max_age=0 or prompt=login) and use the new access token"}

// recentAuth is nil when c authenticated within reauthMaxAge, else
// errReauthRequired: an API caller, or a page's script (returnTo ""), gets
// it with RFC 9470's challenge (setBearerChallenge); a browser is sent to
// sign in again (prompt=login) and back to returnTo, a path of the
// account pages.
func (a *App) recentAuth(c *accountCaller, returnTo string) error {
	if a.authRecent(c) {
		return nil
	}
	if returnTo == "" {
		return errReauthRequired
	}
	return withPage(errReauthRequired, func(w http.ResponseWriter, r *http.Request, _ *apperr.Error) error {
		return a.startAccountSignIn(w, r, c.realm, returnTo, "login")
	})
}

// authRecent says whether c authenticated within reauthMaxAge.
func (a *App) authRecent(c *accountCaller) bool {
	return c.authTime > 0 && a.now().UnixMilli()-c.authTime <= reauthMaxAge.Milliseconds()
}
