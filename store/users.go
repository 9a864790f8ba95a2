package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// User is a person (or later a service account) in a realm.
type User struct {
	ID                   string
	RealmID              string
	Username             string // lowercase
	Email                string // lowercase; empty when unset
	FirstName            string
	LastName             string
	Enabled              bool
	EmailVerified        bool
	RequirePasswordReset bool
	PasswordHash         string // PHC string; empty when the user has no password
	PasswordChangedAt    int64  // Unix milliseconds; 0 when never set
	CreatedAt            int64  // Unix milliseconds
	// ServiceAccountClientID is the internal ID of the client this user
	// acts for; empty for people.
	ServiceAccountClientID string
}

const userColumns = `id, realm_id, username, email, first_name, last_name, enabled, email_verified,
	require_password_reset, password_hash, password_changed_at, created_at, service_account_client_id`

func nameSearch(u *User) string {
	return strings.ToLower(u.FirstName + " " + u.LastName)
}

// userWriteColumns are the columns a user's insert writes: its fields, and
// the ones derived from them (the name search, the folded names).
const userWriteColumns = userColumns + ", name_search, first_name_fold, last_name_fold"

// userWriteValues are the values of userWriteColumns.
func userWriteValues(u *User) []any {
	return []any{u.ID, u.RealmID, u.Username, u.Email, u.FirstName, u.LastName, u.Enabled, u.EmailVerified,
		u.RequirePasswordReset, nullString(u.PasswordHash), nullInt(u.PasswordChangedAt), u.CreatedAt,
		nullString(u.ServiceAccountClientID), nameSearch(u), FoldCase(u.FirstName), FoldCase(u.LastName)}
}

func scanUser(row scanner) (*User, error) {
	var u User
	var hash sql.NullString
	var changed sql.NullInt64
	var serviceAccount sql.NullString
	err := row.Scan(&u.ID, &u.RealmID, &u.Username, &u.Email, &u.FirstName, &u.LastName, &u.Enabled,
		&u.EmailVerified, &u.RequirePasswordReset, &hash, &changed, &u.CreatedAt, &serviceAccount)
	if err != nil {
		return nil, mapErr(err)
	}
	u.PasswordHash, u.PasswordChangedAt, u.ServiceAccountClientID = hash.String, changed.Int64, serviceAccount.String
	return &u, nil
}

// CreateUser inserts u. A username or email taken in the realm is ErrConflict;
// an unknown realm is ErrNotFound.
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	vals := userWriteValues(u)
	_, err := s.w.ExecContext(ctx, "INSERT INTO users ("+userWriteColumns+") VALUES ("+placeholders(len(vals))+")", vals...)
	if err != nil {
		return fmt.Errorf("create user %s: %w", u.Username, mapErr(err))
	}
	return nil
}

// GetUser finds a user of a realm by ID.
func (s *Store) GetUser(ctx context.Context, realmID, id string) (*User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx,
		"SELECT "+userColumns+" FROM users WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", id, err)
	}
	return u, nil
}

// GetUserByUsername finds a user by username, case-insensitively.
func (s *Store) GetUserByUsername(ctx context.Context, realmID, username string) (*User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx,
		"SELECT "+userColumns+" FROM users WHERE realm_id = $1 AND username = $2", realmID, strings.ToLower(username)))
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", username, err)
	}
	return u, nil
}

// UserFilter narrows a user listing. Empty fields do not filter.
type UserFilter struct {
	// Search is a substring of username, email, first or last name; with
	// a trailing * and no leading one (Keycloak's "foo*"), a prefix of
	// them, which the indexes find in a realm of any size.
	Search   string
	Username string
	Email    string
	Exact    bool // Username and Email match whole values instead of substrings
	Enabled  *bool
	Skip     int
	Limit    int
	// NoTotal skips counting every match, which in a realm of a million
	// users costs more than the page: ListUsers then answers -1 for the
	// total, and CountUsers counts on its own.
	NoTotal bool
}

// ListUsers returns one page of a realm's users ordered by username, and how
// many users match the filter in all. Service-account users are not listed,
// as in Keycloak: they belong to their clients.
func (s *Store) ListUsers(ctx context.Context, realmID string, f UserFilter) ([]*User, int, error) {
	cond, args := userConditions(realmID, f)
	total := -1
	if !f.NoTotal {
		var err error
		if total, err = s.countUsers(ctx, cond, args); err != nil {
			return nil, 0, err
		}
	}
	n := len(args)
	args = append(args, f.Limit, f.Skip)
	rows, err := s.r.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM users WHERE %s ORDER BY username LIMIT $%d OFFSET $%d",
		userColumns, cond, n+1, n+2), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", mapErr(err))
	}
	defer rows.Close()
	users := make([]*User, 0, f.Limit)
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, 0, err
		}
		users = append(users, u)
	}
	return users, total, mapErr(rows.Err())
}

// CountUsers counts the users ListUsers would list with f, all pages.
func (s *Store) CountUsers(ctx context.Context, realmID string, f UserFilter) (int, error) {
	cond, args := userConditions(realmID, f)
	return s.countUsers(ctx, cond, args)
}

func (s *Store) countUsers(ctx context.Context, cond string, args []any) (int, error) {
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE "+cond, args...).Scan(&total); err != nil {
		return 0, fmt.Errorf("count users: %w", mapErr(err))
	}
	return total, nil
}

// userConditions is the WHERE clause of a user listing and its arguments.
func userConditions(realmID string, f UserFilter) (string, []any) {
	where := []string{"realm_id = $1", "service_account_client_id IS NULL"}
	args := []any{realmID}
	add := func(cond string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		where = append(where, cond)
	}
	if prefix, ok := searchPrefix(f.Search); ok {
		// The rows of each indexed column's range, by ID, so that the
		// planner looks them up rather than walk the realm's users in
		// order (realm_id || '' keeps it off the realm's index, in
		// SQLite and PostgreSQL alike): "\U0010FFFF" sorts after every
		// character a value may hold after the prefix.
		where[0] = "realm_id || '' = $1"
		lower, folded := strings.ToLower(prefix), FoldCase(prefix)
		add(`id IN (SELECT id FROM users WHERE realm_id = ? AND username >= ? AND username < ?
			UNION SELECT id FROM users WHERE realm_id = ? AND email >= ? AND email < ? AND email <> ''
			UNION SELECT id FROM users WHERE realm_id = ? AND first_name_fold >= ? AND first_name_fold < ?
			UNION SELECT id FROM users WHERE realm_id = ? AND last_name_fold >= ? AND last_name_fold < ?)`,
			realmID, lower, lower+"\U0010FFFF", realmID, lower, lower+"\U0010FFFF",
			realmID, folded, folded+"\U0010FFFF", realmID, folded, folded+"\U0010FFFF")
	} else if f.Search != "" {
		// "*foo*", Keycloak's spelling of a substring, is the default's.
		search := f.Search
		if inner, ok := strings.CutPrefix(search, "*"); ok && len(inner) > 1 {
			if inner, ok = strings.CutSuffix(inner, "*"); ok {
				search = inner
			}
		}
		p := likePattern(search)
		add(`(username LIKE ? ESCAPE '\' OR email LIKE ? ESCAPE '\' OR name_search LIKE ? ESCAPE '\')`, p, p, p)
	}
	for _, m := range []struct{ col, val string }{{"username", f.Username}, {"email", f.Email}} {
		switch {
		case m.val == "":
		case f.Exact:
			add(m.col+" = ?", strings.ToLower(m.val))
		default:
			add(m.col+` LIKE ? ESCAPE '\'`, likePattern(m.val))
		}
	}
	if f.Enabled != nil {
		add("enabled = ?", *f.Enabled)
	}
	return strings.Join(where, " AND "), args
}

// searchPrefix is the prefix a search of the form "foo*" asks for.
func searchPrefix(search string) (string, bool) {
	prefix, ok := strings.CutSuffix(search, "*")
	if !ok || prefix == "" || strings.HasPrefix(prefix, "*") {
		return "", false
	}
	return prefix, true
}

// AllUsers returns every user of a realm, for export.
func (s *Store) AllUsers(ctx context.Context, realmID string) ([]*User, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+userColumns+" FROM users WHERE realm_id = $1 ORDER BY username", realmID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", mapErr(err))
	}
	defer rows.Close()
	var users []*User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, mapErr(rows.Err())
}

// UpdateUser writes a user's profile fields. The password has its own
// method, so an edit racing a reset cannot write an old hash back.
func (s *Store) UpdateUser(ctx context.Context, u *User) error {
	res, err := s.w.ExecContext(ctx, `UPDATE users SET username = $1, email = $2, first_name = $3, last_name = $4,
		name_search = $5, enabled = $6, email_verified = $7, require_password_reset = $8, first_name_fold = $11,
		last_name_fold = $12 WHERE realm_id = $9 AND id = $10`,
		u.Username, u.Email, u.FirstName, u.LastName, nameSearch(u), u.Enabled, u.EmailVerified, u.RequirePasswordReset,
		u.RealmID, u.ID, FoldCase(u.FirstName), FoldCase(u.LastName))
	if err != nil {
		return fmt.Errorf("update user %s: %w", u.ID, mapErr(err))
	}
	return affectedOne(res, "user "+u.ID)
}

// SetUserPassword stores a new password hash and whether it must be changed
// at next login.
func (s *Store) SetUserPassword(ctx context.Context, realmID, id, hash string, changedAt int64, requireReset bool) error {
	res, err := s.w.ExecContext(ctx, `UPDATE users SET password_hash = $1, password_changed_at = $2, require_password_reset = $3
		WHERE realm_id = $4 AND id = $5`, hash, changedAt, requireReset, realmID, id)
	if err != nil {
		return fmt.Errorf("set password of user %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "user "+id)
}

// ReplacePasswordHash replaces the user's password hash old by fresh, a
// hash of the same password in another format (a migrated user's, made
// argon2id at a sign-in): the password's age and reset flag stay as they
// are. A user whose hash is no longer old is ErrNotFound, so that the
// replacement never undoes a change of password that raced it.
func (s *Store) ReplacePasswordHash(ctx context.Context, realmID, id, old, fresh string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE realm_id = $2 AND id = $3 AND password_hash = $4`,
		fresh, realmID, id, old)
	if err != nil {
		return fmt.Errorf("replace password hash of user %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "user "+id+" with that hash")
}

// DeleteUser removes a user.
func (s *Store) DeleteUser(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM users WHERE realm_id = $1 AND id = $2", realmID, id)
	if err != nil {
		return fmt.Errorf("delete user %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "user "+id)
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
func nullInt(n int64) sql.NullInt64      { return sql.NullInt64{Int64: n, Valid: n != 0} }

// GetUserByEmail finds a user by email, case-insensitively. An empty
// address names nobody.
func (s *Store) GetUserByEmail(ctx context.Context, realmID, email string) (*User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return nil, fmt.Errorf("user with email: %w", ErrNotFound)
	}
	u, err := scanUser(s.r.QueryRowContext(ctx,
		"SELECT "+userColumns+" FROM users WHERE realm_id = $1 AND email = $2 AND email <> ''", realmID, email))
	if err != nil {
		return nil, fmt.Errorf("user with email %s: %w", email, err)
	}
	return u, nil
}
