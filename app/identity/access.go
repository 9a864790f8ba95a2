package identity

import (
	"context"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Ending access is for good. Disabling a user, an admin's password reset or
// removal of a user's second factors, disabling a client and suspending an
// identity end the sessions and refresh tokens concerned (offline ones
// too), and move the user's or client's not-before, so that what was
// issued before stays dead when the user or client is enabled again, as
// Keycloak's notBefore. Every path that disables a user or a client goes
// through here, in the transaction of its write.

// EndUserAccess ends every session and refresh token of the user, and every
// access token issued to them so far, on st. It returns the sessions that
// were active, for the back-channel logout the caller sends once st has
// committed.
func (c *Core) EndUserAccess(ctx context.Context, st *store.Store, realmID, userID string) ([]*store.Session, error) {
	now := c.now()
	return st.EndUserAccess(ctx, realmID, userID, notBefore(now), now.UnixMilli())
}

// UpdateClient writes cl on st; a client written disabled has its sessions
// and refresh tokens ended, and every access token issued to it so far. It
// returns the sessions that were active, for the back-channel logout the
// caller sends once st has committed.
func (c *Core) UpdateClient(ctx context.Context, st *store.Store, cl *store.Client) ([]*store.Session, error) {
	if cl.Enabled {
		return nil, st.UpdateClient(ctx, cl)
	}
	var ended []*store.Session
	err := st.Tx(ctx, func(tx *store.Store) error {
		if err := tx.UpdateClient(ctx, cl); err != nil {
			return err
		}
		now := c.now()
		var err error
		ended, err = tx.EndClientAccess(ctx, cl.RealmID, cl.ID, notBefore(now), now.UnixMilli())
		return err
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// notBefore is the first second whose tokens stand after an end of access
// at now: an access token's iat counts whole seconds, so a token issued
// in the second of the end is dead too, even one issued after a re-enable
// within that second.
func notBefore(now time.Time) int64 { return now.Unix() + 1 }
