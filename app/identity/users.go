package identity

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/validate"
	"github.com/idenplane/idenplane/store"
)

// The bounds of a username, in characters.
const (
	minUsernameLength = 2
	maxUsernameLength = 255
)

// maxPersonNameLength bounds a first or last name, in characters.
const maxPersonNameLength = 255

// ValidateUser checks and normalizes the fields of a user about to be
// stored: the username (trimmed and lowercased), the email (lowercased),
// the first and last name. Every path that writes a user applies it.
func ValidateUser(u *store.User) error {
	if err := validate.Identifier("username", u.Username, maxUsernameLength); err != nil {
		return err
	}
	u.Username = strings.ToLower(strings.TrimSpace(u.Username))
	if utf8.RuneCountInString(u.Username) < minUsernameLength {
		return apperr.Field("username", "must be at least %d characters", minUsernameLength)
	}
	if strings.ContainsFunc(u.Username, unicode.IsSpace) {
		return apperr.Field("username", "must not contain spaces")
	}
	if u.Email != "" {
		email, err := validate.NormalizeEmail(u.Email)
		if err != nil {
			return err
		}
		u.Email = email
	}
	if err := validate.PersonName("firstName", u.FirstName, maxPersonNameLength); err != nil {
		return err
	}
	return validate.PersonName("lastName", u.LastName, maxPersonNameLength)
}

// userConflict names the field of a username or email another user of
// the realm holds: a 409 with that field.
func userConflict(err error) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) && (ce.Column == "username" || ce.Column == "email") {
		return &apperr.Error{Status: 409, Code: apperr.CodeConflict, Field: ce.Column,
			Message: "a user with this " + ce.Column + " already exists", Cause: err}
	}
	return err
}

// NewUser is a user to create: what the caller knows of them. The zero
// value of each field is the usual case (an enabled person without a
// password), so that callers set only what they have.
type NewUser struct {
	ID                                   string // a UUID; a new one when empty
	Username, Email, FirstName, LastName string
	Disabled                             bool
	EmailVerified                        bool
	RequirePasswordReset                 bool
	CreatedAt                            int64 // Unix milliseconds; now when zero
	// Password, when set, is the user's first password: checked against
	// the realm's policy and hashed. The hash is slow: give it only when
	// st is not a transaction, or use NewPasswordHash beforehand and give
	// PasswordHash.
	Password *string
	// PasswordHash is a hash made already (NewPasswordHash), or an
	// imported one, taken as it is.
	PasswordHash string
	// PasswordChangedAt is when PasswordHash was set, 0 when unknown (an
	// import without it); with a Password, CreatedAt.
	PasswordChangedAt int64
	// ServiceAccountClientID makes the user the service account of this
	// client (its internal ID).
	ServiceAccountClientID string
}

// NewUserFrom is the NewUser of a user its caller built as it is to be
// stored (an import's, a checked registration's): created as it is, its
// password hash included.
func NewUserFrom(u *store.User) NewUser {
	return NewUser{ID: u.ID, Username: u.Username, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Disabled: !u.Enabled, EmailVerified: u.EmailVerified, RequirePasswordReset: u.RequirePasswordReset,
		CreatedAt: u.CreatedAt, PasswordHash: u.PasswordHash, PasswordChangedAt: u.PasswordChangedAt,
		ServiceAccountClientID: u.ServiceAccountClientID}
}

// CreateUser creates the user nu describes in realm, on st (the pool, or
// a transaction): the user rules (ValidateUser), then the password policy
// and the hash when nu has a Password, then the insert. A username or
// email another user of the realm holds is a 409 naming the field; other
// conflicts (an ID taken) come back as the store's. It returns the user
// as stored.
func (c *Core) CreateUser(ctx context.Context, st *store.Store, realm *store.Realm, nu NewUser) (*store.User, error) {
	u := &store.User{ID: nu.ID, RealmID: realm.ID, Username: nu.Username, Email: nu.Email, FirstName: nu.FirstName,
		LastName: nu.LastName, Enabled: !nu.Disabled, EmailVerified: nu.EmailVerified,
		RequirePasswordReset: nu.RequirePasswordReset, PasswordHash: nu.PasswordHash,
		PasswordChangedAt: nu.PasswordChangedAt, CreatedAt: nu.CreatedAt, ServiceAccountClientID: nu.ServiceAccountClientID}
	if u.ID == "" {
		u.ID = uuid.NewString()
	}
	if u.CreatedAt == 0 {
		u.CreatedAt = c.now().UnixMilli()
	}
	if err := ValidateUser(u); err != nil {
		return nil, err
	}
	if nu.Password != nil {
		if nu.PasswordHash != "" {
			return nil, errors.New("identity: a new user with both a password and a password hash")
		}
		// A new user has no history: the policy needs only the names.
		hash, err := c.NewPasswordHash(ctx, realm, &store.User{Username: u.Username, Email: u.Email}, *nu.Password)
		if err != nil {
			return nil, err
		}
		u.PasswordHash, u.PasswordChangedAt = hash, u.CreatedAt
	}
	if err := st.CreateUser(ctx, u); err != nil {
		return nil, userConflict(err)
	}
	return u, nil
}

// UpdateUser writes u's profile (names, email, flags: a disable or an
// enable too) on st, after the user rules (ValidateUser, which normalizes
// u). A username or email another user holds is a 409 naming the field.
// The profile of a user of a READ_ONLY directory is its directory's: a
// change of its username, email or names is refused (a 400 naming the
// field); its flags stay the realm's. The password has its own way:
// SetPassword. A user written disabled has their access ended
// (EndUserAccess): UpdateUser returns the sessions that ended, for the
// back-channel logout the caller sends once st has committed.
func (c *Core) UpdateUser(ctx context.Context, st *store.Store, u *store.User) ([]*store.Session, error) {
	if err := ValidateUser(u); err != nil {
		return nil, err
	}
	if err := c.checkProfileWritable(ctx, st, u); err != nil {
		return nil, err
	}
	return c.writeUser(ctx, st, u)
}

// UpdateLinkedUser writes the profile of a user linked to a directory
// entry as the directory has it: UpdateUser's rules, but the directory's
// own write, so a READ_ONLY profile changes too. Only the federation
// calls it.
func (c *Core) UpdateLinkedUser(ctx context.Context, st *store.Store, u *store.User) ([]*store.Session, error) {
	if err := ValidateUser(u); err != nil {
		return nil, err
	}
	return c.writeUser(ctx, st, u)
}

// writeUser stores u and, when u is disabled, ends their access in the
// same transaction. A disabled user has no session left to end and no
// token to kill, so writing one again ends nothing more.
func (c *Core) writeUser(ctx context.Context, st *store.Store, u *store.User) ([]*store.Session, error) {
	if u.Enabled {
		return nil, userConflict(st.UpdateUser(ctx, u))
	}
	var ended []*store.Session
	err := st.Tx(ctx, func(tx *store.Store) error {
		if err := tx.UpdateUser(ctx, u); err != nil {
			return userConflict(err)
		}
		var err error
		ended, err = c.EndUserAccess(ctx, tx, u.RealmID, u.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ended, nil
}

// checkProfileWritable refuses a change of the profile of a user whose
// directory owns it.
func (c *Core) checkProfileWritable(ctx context.Context, st *store.Store, u *store.User) error {
	if c.federation == nil {
		return nil
	}
	_, readOnly, err := c.federation.UserFederation(ctx, st, u.RealmID, u.ID)
	if err != nil || !readOnly {
		return err
	}
	old, err := st.GetUser(ctx, u.RealmID, u.ID)
	if err != nil {
		return err
	}
	for _, f := range []struct{ field, now, was string }{{"username", u.Username, old.Username}, {"email", u.Email, old.Email},
		{"firstName", u.FirstName, old.FirstName}, {"lastName", u.LastName, old.LastName}} {
		if f.now != f.was {
			return apperr.Field(f.field, "is read-only: user %s comes from a read-only user directory, where it is changed", old.Username)
		}
	}
	return nil
}

// DeleteUser deletes a person on st; what hangs off them (sessions and
// tokens, consents, memberships, attributes, a scheduled deletion) goes
// by cascade. A client's service account is refused: it goes with the
// client's client_credentials grant (SyncServiceAccount).
func (c *Core) DeleteUser(ctx context.Context, st *store.Store, realm *store.Realm, u *store.User) error {
	if u.ServiceAccountClientID != "" {
		return apperr.Invalid("user %s is a client's service account: remove client_credentials from the client instead", u.Username)
	}
	return st.DeleteUser(ctx, realm.ID, u.ID)
}
