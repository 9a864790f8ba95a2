package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// AdminAccount is what an administrator, a user of the system realm, may
// do. Without one, a user of that realm holds no admin permission.
type AdminAccount struct {
	UserID      string
	Permissions []string // permission names, or ["all"]
	RealmID     string   // the one realm whose routes it acts on; "" for any
	CreatedAt   int64
	CreatedBy   string // "user:<name>", "api-key:<name>", "cli"
}

const adminAccountColumns = "user_id, permissions, realm_id, created_at, created_by"

func scanAdminAccount(row scanner) (*AdminAccount, error) {
	var a AdminAccount
	var perms string
	var realm sql.NullString
	if err := row.Scan(&a.UserID, &perms, &realm, &a.CreatedAt, &a.CreatedBy); err != nil {
		return nil, mapErr(err)
	}
	a.RealmID = realm.String
	if err := json.Unmarshal([]byte(perms), &a.Permissions); err != nil {
		return nil, fmt.Errorf("decode permissions of admin account %s: %w", a.UserID, err)
	}
	return &a, nil
}

// SystemRealmID is the ID of the realm administrators belong to, or
// ErrNotFound before the first start has made it.
func (s *Store) SystemRealmID(ctx context.Context) (string, error) {
	var id string
	if err := s.r.QueryRowContext(ctx, "SELECT realm_id FROM system_realm WHERE id = 1").Scan(&id); err != nil {
		return "", fmt.Errorf("system realm: %w", mapErr(err))
	}
	return id, nil
}

// SetSystemRealm names the realm administrators belong to, once.
func (s *Store) SetSystemRealm(ctx context.Context, realmID string) error {
	if _, err := s.w.ExecContext(ctx, "INSERT INTO system_realm (id, realm_id) VALUES (1, $1)", realmID); err != nil {
		return fmt.Errorf("set system realm: %w", mapErr(err))
	}
	return nil
}

// CreateAdminAccount stores what the system realm's user a.UserID may do.
func (s *Store) CreateAdminAccount(ctx context.Context, a *AdminAccount) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO admin_accounts ("+adminAccountColumns+") VALUES ($1, $2, $3, $4, $5)",
		a.UserID, jsonList(a.Permissions), nullString(a.RealmID), a.CreatedAt, a.CreatedBy)
	if err != nil {
		return fmt.Errorf("create admin account %s: %w", a.UserID, mapErr(err))
	}
	return nil
}

// GetAdminAccount is the account of the user userID, or ErrNotFound.
func (s *Store) GetAdminAccount(ctx context.Context, userID string) (*AdminAccount, error) {
	a, err := scanAdminAccount(s.r.QueryRowContext(ctx, "SELECT "+adminAccountColumns+" FROM admin_accounts WHERE user_id = $1", userID))
	if err != nil {
		return nil, fmt.Errorf("admin account %s: %w", userID, err)
	}
	return a, nil
}

// ListAdminAccounts lists every admin account, oldest first.
func (s *Store) ListAdminAccounts(ctx context.Context) ([]*AdminAccount, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+adminAccountColumns+" FROM admin_accounts ORDER BY created_at, user_id")
	if err != nil {
		return nil, fmt.Errorf("list admin accounts: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*AdminAccount
	for rows.Next() {
		a, err := scanAdminAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, mapErr(rows.Err())
}

// UpdateAdminAccount replaces an account's permissions and realm.
func (s *Store) UpdateAdminAccount(ctx context.Context, a *AdminAccount) error {
	res, err := s.w.ExecContext(ctx, "UPDATE admin_accounts SET permissions = $1, realm_id = $2 WHERE user_id = $3",
		jsonList(a.Permissions), nullString(a.RealmID), a.UserID)
	if err != nil {
		return fmt.Errorf("update admin account %s: %w", a.UserID, mapErr(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return mapErr(err)
	} else if n == 0 {
		return fmt.Errorf("admin account %s: %w", a.UserID, ErrNotFound)
	}
	return nil
}

// ListAdminUsers lists the password-only admin users of versions before
// the system realm, which the first start moves into it.
func (s *Store) ListAdminUsers(ctx context.Context) ([]*AdminUser, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id, username, password_hash, created_at FROM admin_users ORDER BY created_at")
	if err != nil {
		return nil, fmt.Errorf("list admin users: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*AdminUser
	for rows.Next() {
		var a AdminUser
		if err := rows.Scan(&a.ID, &a.Username, &a.PasswordHash, &a.CreatedAt); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, &a)
	}
	return out, mapErr(rows.Err())
}

// DeleteAdminUser removes an admin user of the earlier kind once moved.
func (s *Store) DeleteAdminUser(ctx context.Context, id string) error {
	_, err := s.w.ExecContext(ctx, "DELETE FROM admin_users WHERE id = $1", id)
	return mapErr(err)
}
