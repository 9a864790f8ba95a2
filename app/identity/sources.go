package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// The credential-source seam (the package doc says how it is used).

// A PasswordSource knows some logins of a realm and checks their
// passwords: the local store (the first source, always), and later a
// directory such as LDAP. It checks only: the flood guard, the lockout,
// and the account's standing are the core's, around every source.
type PasswordSource interface {
	CheckPassword(ctx context.Context, at PasswordAttempt) (Answer, error)
}

// PasswordAttempt is one check of a password, as a source sees it.
type PasswordAttempt struct {
	Realm    *store.Realm
	Login    string // as typed: a username, or an email address
	Password string
	// User is the local user the login names (by email when it holds an
	// @, else by username), nil for none.
	User *store.User
	// Guarded says the attempt comes from an address past its limit: only
	// a right password of an existing account passes, so a source may
	// leave a login it does not know unchecked.
	Guarded bool
	guard   *signInGuard // the local source's bounds on its hash
}

// Federation knows the users linked to a directory entry: their password
// is always the directory's, and in a READ_ONLY directory their profile
// too. The LDAP federation implements it.
type Federation interface {
	UserFederation(ctx context.Context, st *store.Store, realmID, userID string) (linked, readOnly bool, err error)
}

// ErrDirectoryPassword refuses a password set for a user whose password is
// its directory's.
var ErrDirectoryPassword = apperr.Field("password", "is the user directory's: this user's password is changed in the directory")

// Verdict is a source's answer about a login and its password.
type Verdict int

const (
	// NotMine: the source knows no such login; the next source is asked.
	NotMine Verdict = iota
	// WrongPassword: the login is the source's, the password is not its.
	WrongPassword
	// RightPassword: the login is the source's, the password is right.
	RightPassword
)

// Answer is a source's verdict and the user of the realm it names: always
// with RightPassword, with WrongPassword when the source has one (so that
// the failure counts against that user's lockout).
type Answer struct {
	Verdict Verdict
	User    *store.User
}

// askSources asks the sources in order; the first answer other than
// NotMine decides.
func (c *Core) askSources(ctx context.Context, at PasswordAttempt) (Answer, error) {
	for i, s := range c.sources {
		answer, err := s.CheckPassword(ctx, at)
		if err != nil {
			return Answer{}, err
		}
		if answer.Verdict == RightPassword && answer.User == nil {
			return Answer{}, fmt.Errorf("credential source %d answered a right password without its user", i)
		}
		if answer.Verdict != NotMine {
			return answer, nil
		}
	}
	return Answer{Verdict: NotMine}, nil
}

// localSource is the store's users and their password hashes.
type localSource struct{ c *Core }

// CheckPassword checks password against the hash of the user the login
// names (nil for nobody: against a dummy hash, so that it takes as long).
// A user linked to a directory entry is not the store's to check.
// A user without a password (an account that cannot sign in by password,
// a service account) is the store's, and the password wrong. From a
// guarded address an unknown name is not checked: each would cost a
// password hash, and holdRefusal evens out the time; a check that finds
// no hash slot there in time is refused as the flood guard's (busy).
func (s localSource) CheckPassword(ctx context.Context, at PasswordAttempt) (Answer, error) {
	user, g := at.User, at.guard
	// A user linked to a directory entry has no password here: the
	// directory's source checks it, always.
	if user != nil && user.PasswordHash == "" && user.ServiceAccountClientID == "" {
		_, err := s.c.store.GetFederationLink(ctx, at.Realm.ID, user.ID)
		if err == nil {
			return Answer{Verdict: NotMine}, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return Answer{}, err
		}
	}
	hash := dummyArgon2Hash
	if user != nil && user.PasswordHash != "" && user.ServiceAccountClientID == "" {
		hash = user.PasswordHash
	}
	ok := false
	if user != nil || !g.guarded {
		var err error
		ok, err = s.c.verifyPasswordWithin(ctx, hash, at.Password, g.hashWait(s.c))
		if errors.Is(err, ErrHashBusy) && g.guarded {
			return Answer{}, g.busy()
		} else if err != nil && !errors.Is(err, ErrBadHash) {
			return Answer{}, err
		}
	}
	switch {
	case user == nil:
		return Answer{Verdict: NotMine}, nil
	case hash == dummyArgon2Hash || !ok:
		return Answer{Verdict: WrongPassword, User: user}, nil
	}
	return Answer{Verdict: RightPassword, User: user}, nil
}
