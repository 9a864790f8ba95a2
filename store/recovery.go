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

// PeekActionToken checks, without using it, that the token of hash would
// be accepted by ConsumeActionToken at now. Anything else is ErrNotFound.
func (s *Store) PeekActionToken(ctx context.Context, realmID string, hash []byte, kind string, now int64) (*ActionToken, error) {
	var t ActionToken
	err := s.r.QueryRowContext(ctx, `SELECT a.token_hash, a.realm_id, a.user_id, a.kind, a.email, a.created_at, a.expires_at
		FROM action_tokens a JOIN users u ON u.id = a.user_id
		WHERE a.token_hash = $1 AND a.realm_id = $2 AND a.kind = $3 AND a.used_at IS NULL AND a.expires_at > $4
		AND u.email = a.email`, hash, realmID, kind, now).Scan(
		&t.Hash, &t.RealmID, &t.UserID, &t.Kind, &t.Email, &t.CreatedAt, &t.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("%s token: %w", kind, mapErr(err))
	}
	return &t, nil
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
