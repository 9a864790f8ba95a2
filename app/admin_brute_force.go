package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// The admin side of brute-force protection: who is locked out, and
// unlocking them.

// lockedUserRep is a locked user's record. Times are Unix milliseconds;
// lockedUntil is null for a permanent lockout, which lasts until an
// unlock. numFailures counts failures since the last reset or the end of
// the last lockout; temporaryLockouts counts lockouts since the last reset.
type lockedUserRep struct {
	UserID            string `json:"userId"`
	Username          string `json:"username"`
	NumFailures       int    `json:"numFailures"`
	LastFailure       int64  `json:"lastFailure"`
	LastIPFailure     string `json:"lastIPFailure"`
	LockedUntil       *int64 `json:"lockedUntil"`
	Permanent         bool   `json:"permanent"`
	TemporaryLockouts int    `json:"temporaryLockouts"`
}

func toLockedUserRep(u *store.LockedUser) lockedUserRep {
	rep := lockedUserRep{UserID: u.UserID, Username: u.Username, NumFailures: u.Failures, LastFailure: u.LastFailureAt,
		LastIPFailure: u.LastIP, Permanent: u.Permanent(), TemporaryLockouts: u.TemporaryLockouts}
	if !rep.Permanent {
		rep.LockedUntil = &u.LockedUntil
	}
	return rep
}

// listLockedUsers lists the realm's users locked out now, permanent
// lockouts first, then by the end of the lockout, latest first; paged
// with first and max. While the realm's protection is off nobody is
// locked out, so the list is empty; the records stay, and count again
// when it is turned back on.
func (a *App) listLockedUsers(w http.ResponseWriter, r *http.Request) error {
	realm, err := a.realm(r)
	if err != nil {
		return err
	}
	return httpx.ListPage(w, r, httpx.DefaultPageSize, func(first, max int) ([]*store.LockedUser, error) {
		if !realm.BruteForceEnabled {
			return nil, nil
		}
		return a.store.ListLockedUsers(r.Context(), realm.ID, a.now().UnixMilli(), first, max)
	}, toLockedUserRep)
}

// unlockUser lifts the user's lockout, temporary or permanent, and forgets
// the failures counted so far. A user who is not locked is no error, as in
// Keycloak; an unknown user is a 404.
func (a *App) unlockUser(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := a.user(r)
	if err != nil {
		return err
	}
	if err := a.store.ClearLoginFailures(r.Context(), realm.ID, u.ID); err != nil {
		return err
	}
	return httpx.NoContent(w)
}
