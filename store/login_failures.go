package store

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// PermanentLockout is the locked_until of a user locked out for good: the
// largest BIGINT, later than any clock.
const PermanentLockout int64 = math.MaxInt64

// LoginFailurePolicy is a realm's brute-force policy, in the store's units.
type LoginFailurePolicy struct {
	MaxFailures    int   // failures that start a lockout
	LockoutMillis  int64 // length of a temporary lockout
	ResetMillis    int64 // quiet time after the last failure that forgets the count; 0 never
	PermanentAfter int   // temporary lockouts after which the next one is permanent; 0 never
}

// LoginFailure is a user's record of failed sign-ins.
type LoginFailure struct {
	RealmID           string
	UserID            string
	Failures          int   // since the last reset or the last lockout's end
	LastFailureAt     int64 // Unix milliseconds
	LastIP            string
	TemporaryLockouts int   // since the last reset
	LockedUntil       int64 // Unix milliseconds; 0 never locked; PermanentLockout for good
}

// Permanent says whether the lockout lasts until an admin unlocks the user.
func (f *LoginFailure) Permanent() bool { return f.LockedUntil == PermanentLockout }

// Locked says whether the user is locked out at now.
func (f *LoginFailure) Locked(now int64) bool { return f.LockedUntil > now }

// LockedUser is a locked user's failure record with the username.
type LockedUser struct {
	LoginFailure
	Username string
}

const loginFailureColumns = `realm_id, user_id, failures, last_failure_at, last_ip, temporary_lockouts, locked_until`

func scanLoginFailure(row scanner, extra ...any) (*LoginFailure, error) {
	var f LoginFailure
	dest := append([]any{&f.RealmID, &f.UserID, &f.Failures, &f.LastFailureAt, &f.LastIP, &f.TemporaryLockouts, &f.LockedUntil}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, mapErr(err)
	}
	return &f, nil
}

// GetLoginFailure returns the user's failure record; ErrNotFound when the
// user has none.
func (s *Store) GetLoginFailure(ctx context.Context, realmID, userID string) (*LoginFailure, error) {
	f, err := scanLoginFailure(s.r.QueryRowContext(ctx,
		"SELECT "+loginFailureColumns+" FROM login_failures WHERE realm_id = $1 AND user_id = $2", realmID, userID))
	if err != nil {
		return nil, fmt.Errorf("login failures of user %s: %w", userID, err)
	}
	return f, nil
}

// LoginLock says whether the user is locked out at now. A temporary
// lockout that has run out no longer locks.
func (s *Store) LoginLock(ctx context.Context, realmID, userID string, now int64) (bool, error) {
	f, err := s.GetLoginFailure(ctx, realmID, userID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return f.Locked(now), nil
}

// RecordLoginFailure counts one failed sign-in of the user at now from ip,
// and locks the user out when p says so. It returns the new record and
// whether this failure started a lockout.
//
// The read and the write are one transaction, and the writer is one
// connection taking the lock at BEGIN, so concurrent failures queue and
// none is lost. (PostgreSQL will need SELECT … FOR UPDATE here.) A failure
// while the user is locked out is not counted: the lockout is in force,
// and counting would let an attacker hasten a permanent one.
func (s *Store) RecordLoginFailure(ctx context.Context, realmID, userID, ip string, now int64, p LoginFailurePolicy) (*LoginFailure, bool, error) {
	var f *LoginFailure
	var locked bool
	err := s.Tx(ctx, func(tx *Store) error {
		var err error
		f, err = scanLoginFailure(tx.w.QueryRowContext(ctx,
			"SELECT "+loginFailureColumns+" FROM login_failures WHERE realm_id = $1 AND user_id = $2", realmID, userID))
		switch {
		case errors.Is(err, ErrNotFound):
			f = &LoginFailure{RealmID: realmID, UserID: userID}
		case err != nil:
			return err
		case f.Locked(now):
			return nil
		}
		locked = f.count(ip, now, p)
		_, err = tx.w.ExecContext(ctx, "INSERT INTO login_failures ("+loginFailureColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (realm_id, user_id) DO UPDATE SET failures = excluded.failures, last_failure_at = excluded.last_failure_at,
			last_ip = excluded.last_ip, temporary_lockouts = excluded.temporary_lockouts, locked_until = excluded.locked_until`,
			f.RealmID, f.UserID, f.Failures, f.LastFailureAt, f.LastIP, f.TemporaryLockouts, f.LockedUntil)
		return mapErr(err)
	})
	if err != nil {
		return nil, false, fmt.Errorf("record login failure of user %s: %w", userID, err)
	}
	return f, locked, nil
}

// count adds one failure to f, which is not locked at now, and says
// whether it starts a lockout.
func (f *LoginFailure) count(ip string, now int64, p LoginFailurePolicy) bool {
	switch {
	case f.LastFailureAt > 0 && p.ResetMillis > 0 && now-f.LastFailureAt >= p.ResetMillis:
		// Quiet long enough: start over, lockouts included.
		f.Failures, f.TemporaryLockouts, f.LockedUntil = 0, 0, 0
	case f.LockedUntil != 0:
		// A lockout ran out: a fresh count toward the next one.
		f.Failures, f.LockedUntil = 0, 0
	}
	f.Failures++
	f.LastFailureAt, f.LastIP = now, ip
	if f.Failures < max(p.MaxFailures, 1) {
		return false
	}
	if p.PermanentAfter > 0 && f.TemporaryLockouts >= p.PermanentAfter {
		f.LockedUntil = PermanentLockout
	} else {
		f.TemporaryLockouts++
		f.LockedUntil = now + max(p.LockoutMillis, 1)
	}
	return true
}

// ClearLoginFailures forgets the user's failures and lifts any lockout:
// after a successful sign-in, or an admin's unlock. A user without a
// record is no error.
func (s *Store) ClearLoginFailures(ctx context.Context, realmID, userID string) error {
	if _, err := s.w.ExecContext(ctx, "DELETE FROM login_failures WHERE realm_id = $1 AND user_id = $2", realmID, userID); err != nil {
		return fmt.Errorf("clear login failures of user %s: %w", userID, mapErr(err))
	}
	return nil
}

// ListLockedUsers returns one page of the realm's users locked out at now:
// permanent lockouts first, then by the end of the lockout, latest first.
func (s *Store) ListLockedUsers(ctx context.Context, realmID string, now int64, first, max int) ([]*LockedUser, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+prefixColumns("f", loginFailureColumns)+`, u.username
		FROM login_failures f JOIN users u ON u.id = f.user_id
		WHERE f.realm_id = $1 AND f.locked_until > $2
		ORDER BY f.locked_until DESC, f.user_id DESC LIMIT $3 OFFSET $4`, realmID, now, max, first)
	if err != nil {
		return nil, fmt.Errorf("list locked users: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*LockedUser
	for rows.Next() {
		var lu LockedUser
		f, err := scanLoginFailure(rows, &lu.Username)
		if err != nil {
			return nil, err
		}
		lu.LoginFailure = *f
		out = append(out, &lu)
	}
	return out, mapErr(rows.Err())
}
