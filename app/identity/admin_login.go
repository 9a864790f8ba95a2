package identity

import (
	"context"
	"errors"
	"strings"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The admin login's check. Admin users are no realm's users: they sign in
// to the admin API only, by password, with no credential sources, no
// realm policy and no lockout. The flood guard is the same, with counts
// of its own kept in the store (StoredThrottle), so that a restart does
// not lift it.

// ErrAdminCredentials is a wrong admin username or password.
var ErrAdminCredentials = apperr.New(401, apperr.CodeInvalidCredentials, "invalid username or password")

// CheckAdminLogin finds the admin user a login names and checks the
// password, under the flood guard, from ip: the user, or
// ErrAdminCredentials, or a *ThrottledError (answered, from a guarded
// address, GuardedAnswerTime after the attempt began).
func (c *Core) CheckAdminLogin(ctx context.Context, username, password, ip string) (*store.AdminUser, error) {
	g, err := guardSignIn(c.adminThrottle, "ip:"+ip, "ip-accounts:"+ip)
	if err == nil {
		// The username key is case-insensitive, so case games don't dodge it.
		err = g.admit("user:"+strings.ToLower(username), LoginLimitPerUser)
	}
	var user *store.AdminUser
	if err == nil {
		user, err = c.checkAdminPassword(ctx, g, username, password)
	}
	var throttled *ThrottledError
	if errors.As(err, &throttled) {
		c.holdRefusal(ctx, g)
	}
	return user, err
}

// checkAdminPassword finds the admin user a login names and checks the
// password, past the flood guard's first say: the user, or
// ErrAdminCredentials, or from a guarded address a *ThrottledError.
func (c *Core) checkAdminPassword(ctx context.Context, g *signInGuard, username, password string) (*store.AdminUser, error) {
	user, err := c.store.GetAdminUserByUsername(ctx, username)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	ok := false
	// A guarded address's unknown names are not checked (signin_guard.go).
	if user != nil || !g.guarded {
		hash := dummyArgon2Hash // verify against something, so unknown users take as long
		if user != nil {
			hash = user.PasswordHash
		}
		ok, err = c.verifyPasswordWithin(ctx, hash, password, g.hashWait(c))
		if errors.Is(err, ErrHashBusy) && g.guarded {
			return nil, g.busy()
		} else if err != nil {
			return nil, err
		}
	}
	if user == nil || !ok {
		return nil, g.failed(ctx, user != nil, ErrAdminCredentials)
	}
	return user, g.succeeded(ctx)
}
