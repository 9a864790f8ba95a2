package account

import (
	"net/http"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/signin"
)

// Registering or removing a second factor asks for a recent
// authentication, as Keycloak's credential setup does: whoever holds a
// user's access token, or sits at a browser left signed in, must not be
// able to put a factor of their own on the account, or take the user's
// off, without proving the user's credentials again. TOTP removal asks
// for a code or the password in the request itself instead.

// reauthMaxAge is how old the authentication may be.
const reauthMaxAge = 5 * time.Minute

// ErrReauthRequired answers a Bearer caller whose authentication is older.
var ErrReauthRequired = &apperr.Error{Status: http.StatusUnauthorized, Code: apperr.CodeReauthRequired,
	Message: "registering or removing a second factor needs an authentication at most 5 minutes old: " +
		"sign the user in again (max_age=0 or prompt=login) and use the new access token"}

// RecentAuth is nil when c authenticated within reauthMaxAge, else
// ErrReauthRequired: an API caller, or a page's script (returnTo ""), gets
// it with RFC 9470's challenge (SetBearerChallenge); a browser is sent to
// sign in again (prompt=login) and back to returnTo, a path of the
// account pages.
func (s *Service) RecentAuth(c *Caller, returnTo string) error {
	if s.AuthRecent(c) {
		return nil
	}
	if returnTo == "" {
		return ErrReauthRequired
	}
	return signin.WithPage(ErrReauthRequired, func(w http.ResponseWriter, r *http.Request, _ *apperr.Error) error {
		return s.StartSignIn(w, r, c.Realm, returnTo, "login")
	})
}

// AuthRecent says whether c authenticated within reauthMaxAge.
func (s *Service) AuthRecent(c *Caller) bool {
	return c.AuthTime > 0 && s.deps.Now().UnixMilli()-c.AuthTime <= reauthMaxAge.Milliseconds()
}
