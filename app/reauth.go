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

// recentAuth says whether c authenticated within reauthMaxAge. When not,
// the caller is answered: a browser sent to sign in again (prompt=login)
// and back to returnTo, a path of the account pages; a Bearer caller, or
// a page's script (returnTo ""), with errReauthRequired, the error
// returned.
func (a *App) recentAuth(w http.ResponseWriter, r *http.Request, c *accountCaller, returnTo string) (bool, error) {
	if a.authRecent(c) {
		return true, nil
	}
	if c.api || returnTo == "" {
		// RFC 9470's challenge: the client can tell what to ask for.
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+c.realm.Name+`", error="insufficient_user_authentication", `+
			`error_description="a recent authentication is required", max_age="0"`)
		return false, errReauthRequired
	}
	return false, a.startAccountSignIn(w, r, c.realm, returnTo, "login")
}

// authRecent says whether c authenticated within reauthMaxAge.
func (a *App) authRecent(c *accountCaller) bool {
	return c.authTime > 0 && a.now().UnixMilli()-c.authTime <= reauthMaxAge.Milliseconds()
}
