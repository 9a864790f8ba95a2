package store

import (
	"context"
	"fmt"
	"strings"
)

// FindRecoveryUser finds the active user of the realm whose username or
// email is login, case-insensitively: the account a "forgot password"
// form names. A pending or otherwise inactive account is ErrNotFound.
func (s *Store) FindRecoveryUser(ctx context.Context, realmID, login string) (*User, error) {
	login = strings.ToLower(strings.TrimSpace(login))
	if login == "" {
		return nil, fmt.Errorf("user: %w", ErrNotFound)
	}
	u, err := scanUser(s.r.QueryRowContext(ctx, "SELECT "+userColumns+` FROM users
		WHERE realm_id = $1 AND (username = $2 OR (email <> '' AND email = $2)) AND status = 'active'
		ORDER BY username = $2 DESC LIMIT 1`, realmID, login))
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", login, err)
	}
	return u, nil
}

// MarkEmailVerified marks the user's email verified, provided it is still
// email: an address changed since the link was sent stays unverified.
func (s *Store) MarkEmailVerified(ctx context.Context, realmID, userID, email string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE users SET email_verified = TRUE WHERE realm_id = $1 AND id = $2 AND email = $3`,
		realmID, userID, email)
	if err != nil {
		return fmt.Errorf("verify email of user %s: %w", userID, mapErr(err))
	}
	return affectedOne(res, "user "+userID)
}
