package identity

import (
	"context"
	"strings"

	"github.com/idenplane/idenplane/store"
)

// The admin API's password login. Administrators are users of the system
// realm, so the realm's rules apply to them (its credential sources, its
// lockout, its login events); the flood guard before them has counts of
// its own kept in the store (StoredThrottle), so that a restart does not
// lift it and a storm on the admin login spends none of the realms'.

// CheckAdminLogin checks an administrator's login and password in the
// system realm, from ip, as CheckCredentials does, under the admin flood
// guard: the user, or ErrBadCredentials (a lockout too, with a
// *LockedError), ErrUserDisabled (with the user, for the event), or a
// *ThrottledError.
func (c *Core) CheckAdminLogin(ctx context.Context, system *store.Realm, login, password, ip string) (*store.User, error) {
	g, err := guardSignIn(c.adminThrottle, "ip:"+ip, "ip-accounts:"+ip)
	if err == nil {
		// The login key is case-insensitive, so case games don't dodge it.
		err = g.admit("user:"+strings.ToLower(login), LoginLimitPerUser)
	}
	var user *store.User
	if err == nil {
		user, err = c.checkAdmittedCredentials(ctx, g, system, login, password, ip)
	}
	if err != nil {
		c.holdRefusal(ctx, g)
	}
	return user, err
}
