package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// User statuses: only active users sign in.
const (
	UserActive   = "active"
	UserPending  = "pending" // registered, awaiting an administrator's approval
	UserRejected = "rejected"
)

// RegistrationField is an extra field of a realm's registration form; its
// value is stored as the user attribute named Key.
type RegistrationField struct {
	ID        string
	RealmID   string
	Key       string
	Label     string
	Type      string // text, email, tel, number, date, checkbox, select
	Required  bool
	Pattern   string // a regular expression; empty for none
	Options   []string
	Enabled   bool
	Position  int
	CreatedAt int64 // Unix milliseconds
}

const registrationFieldColumns = `id, realm_id, field_key, label, field_type, required, pattern, options, enabled, position, created_at`

func scanRegistrationField(row scanner) (*RegistrationField, error) {
	var f RegistrationField
	var options string
	if err := row.Scan(&f.ID, &f.RealmID, &f.Key, &f.Label, &f.Type, &f.Required, &f.Pattern, &options, &f.Enabled,
		&f.Position, &f.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(options), &f.Options); err != nil {
		return nil, fmt.Errorf("registration field %s options: %w", f.ID, err)
	}
	return &f, nil
}

func registrationFieldValues(f *RegistrationField) ([]any, error) {
	opts := f.Options
	if opts == nil {
		opts = []string{}
	}
	options, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	return []any{f.ID, f.RealmID, f.Key, f.Label, f.Type, f.Required, f.Pattern, string(options), f.Enabled,
		f.Position, f.CreatedAt}, nil
}

// CreateRegistrationField inserts f. A key taken in the realm is ErrConflict.
func (s *Store) CreateRegistrationField(ctx context.Context, f *RegistrationField) error {
	vals, err := registrationFieldValues(f)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, "INSERT INTO registration_fields ("+registrationFieldColumns+") VALUES ("+
		placeholders(len(vals))+")", vals...)
	if err != nil {
		return fmt.Errorf("create registration field %s: %w", f.Key, mapErr(err))
	}
	return nil
}

// UpdateRegistrationField replaces every field of f but its ID, realm and
// creation time. A missing field is ErrNotFound.
func (s *Store) UpdateRegistrationField(ctx context.Context, f *RegistrationField) error {
	vals, err := registrationFieldValues(f)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE registration_fields SET field_key = $3, label = $4, field_type = $5,
		required = $6, pattern = $7, options = $8, enabled = $9, position = $10 WHERE id = $1 AND realm_id = $2`,
		vals[:10]...)
	if n, err := rowsAffected(res, err, "update registration field "+f.Key); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("registration field %s: %w", f.ID, ErrNotFound)
	}
	return nil
}

// DeleteRegistrationField removes a field; the attributes users gave for it stay.
func (s *Store) DeleteRegistrationField(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM registration_fields WHERE realm_id = $1 AND id = $2`, realmID, id)
	if n, err := rowsAffected(res, err, "delete registration field"); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("registration field %s: %w", id, ErrNotFound)
	}
	return nil
}

// GetRegistrationField finds a field of a realm by ID.
func (s *Store) GetRegistrationField(ctx context.Context, realmID, id string) (*RegistrationField, error) {
	f, err := scanRegistrationField(s.r.QueryRowContext(ctx, "SELECT "+registrationFieldColumns+
		" FROM registration_fields WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("registration field %s: %w", id, err)
	}
	return f, nil
}

// ListRegistrationFields returns a realm's fields by position, then key;
// only the enabled ones when enabledOnly.
func (s *Store) ListRegistrationFields(ctx context.Context, realmID string, enabledOnly bool) ([]*RegistrationField, error) {
	q := "SELECT " + registrationFieldColumns + " FROM registration_fields WHERE realm_id = $1"
	if enabledOnly {
		q += " AND enabled"
	}
	rows, err := s.r.QueryContext(ctx, q+" ORDER BY position, field_key", realmID)
	if err != nil {
		return nil, fmt.Errorf("list registration fields: %w", mapErr(err))
	}
	defer rows.Close()
	fields := []*RegistrationField{}
	for rows.Next() {
		f, err := scanRegistrationField(rows)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, mapErr(rows.Err())
}

// RegistrationModeration says whether a realm's new users wait for
// approval; false for a realm that never set it.
func (s *Store) RegistrationModeration(ctx context.Context, realmID string) (bool, error) {
	var on bool
	err := mapErr(s.r.QueryRowContext(ctx, `SELECT moderation FROM registration_settings WHERE realm_id = $1`, realmID).Scan(&on))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("registration settings: %w", err)
	}
	return on, nil
}

// SetRegistrationModeration switches moderation for a realm; an unknown
// realm is ErrNotFound.
func (s *Store) SetRegistrationModeration(ctx context.Context, realmID string, on bool) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO registration_settings (realm_id, moderation) VALUES ($1, $2)
		ON CONFLICT (realm_id) DO UPDATE SET moderation = excluded.moderation`, realmID, on)
	if err != nil {
		return fmt.Errorf("set registration moderation: %w", mapErr(err))
	}
	return nil
}

// SetUserAttributes stores attrs for a user, replacing values of the same names.
func (s *Store) SetUserAttributes(ctx context.Context, userID string, attrs map[string]string) error {
	for name, value := range attrs {
		_, err := s.w.ExecContext(ctx, `INSERT INTO user_attributes (user_id, name, value) VALUES ($1, $2, $3)
			ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value`, userID, name, value)
		if err != nil {
			return fmt.Errorf("set user attribute %s: %w", name, mapErr(err))
		}
	}
	return nil
}

// UserAttributes returns a user's attributes; empty when none.
func (s *Store) UserAttributes(ctx context.Context, userID string) (map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, value FROM user_attributes WHERE user_id = $1`, userID)
	if err != nil {
		return nil, fmt.Errorf("user attributes: %w", mapErr(err))
	}
	defer rows.Close()
	attrs := map[string]string{}
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			return nil, mapErr(err)
		}
		attrs[n] = v
	}
	return attrs, mapErr(rows.Err())
}

// UserStatus is a user's status: UserActive, UserPending or UserRejected.
func (s *Store) UserStatus(ctx context.Context, realmID, userID string) (string, error) {
	var status string
	err := s.r.QueryRowContext(ctx, `SELECT status FROM users WHERE realm_id = $1 AND id = $2`, realmID, userID).Scan(&status)
	if err != nil {
		return "", fmt.Errorf("user %s status: %w", userID, mapErr(err))
	}
	return status, nil
}

// ChangeUserStatus moves a user from status from to status to. A user
// missing or not in from is ErrNotFound, so two moderators cannot both
// decide on one user.
func (s *Store) ChangeUserStatus(ctx context.Context, realmID, userID, from, to string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE users SET status = $4 WHERE realm_id = $1 AND id = $2 AND status = $3`,
		realmID, userID, from, to)
	if n, err := rowsAffected(res, err, "change user status"); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("%s user %s: %w", from, userID, ErrNotFound)
	}
	return nil
}

// ListUsersByStatus returns a realm's users of a status, oldest first.
func (s *Store) ListUsersByStatus(ctx context.Context, realmID, status string) ([]*User, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+userColumns+" FROM users WHERE realm_id = $1 AND status = $2 ORDER BY created_at, username",
		realmID, status)
	if err != nil {
		return nil, fmt.Errorf("list %s users: %w", status, mapErr(err))
	}
	defer rows.Close()
	users := []*User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, mapErr(rows.Err())
}
