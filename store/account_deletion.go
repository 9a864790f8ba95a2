package store

import (
	"context"
	"fmt"
)

// AccountDeletion is a user's request to have their account deleted once
// a grace window ends; until then the user may cancel it.
type AccountDeletion struct {
	UserID      string
	RealmID     string
	RequestedAt int64 // Unix milliseconds
	DeleteAt    int64
	RealmName   string // filled by DueAccountDeletions
}

// ScheduleAccountDeletion records d. A deletion already scheduled for the
// user is ErrConflict (the first one's date stands); an unknown user or
// realm is ErrNotFound.
func (s *Store) ScheduleAccountDeletion(ctx context.Context, d *AccountDeletion) error {
	return s.Tx(ctx, func(tx *Store) error {
		// Foreign keys prove the rows exist; this proves they belong together.
		var n int
		if err := tx.w.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE id = $1 AND realm_id = $2",
			d.UserID, d.RealmID).Scan(&n); err != nil {
			return fmt.Errorf("schedule deletion of user %s: %w", d.UserID, mapErr(err))
		}
		if n == 0 {
			return fmt.Errorf("user %s: %w", d.UserID, ErrNotFound)
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO account_deletions (user_id, realm_id, requested_at, delete_at)
			VALUES ($1, $2, $3, $4)`, d.UserID, d.RealmID, d.RequestedAt, d.DeleteAt)
		if err != nil {
			return fmt.Errorf("schedule deletion of user %s: %w", d.UserID, mapErr(err))
		}
		return nil
	})
}

// GetAccountDeletion returns the deletion scheduled for a user of the
// realm; none is ErrNotFound.
func (s *Store) GetAccountDeletion(ctx context.Context, realmID, userID string) (*AccountDeletion, error) {
	var d AccountDeletion
	err := s.r.QueryRowContext(ctx, `SELECT user_id, realm_id, requested_at, delete_at FROM account_deletions
		WHERE user_id = $1 AND realm_id = $2`, userID, realmID).Scan(&d.UserID, &d.RealmID, &d.RequestedAt, &d.DeleteAt)
	if err != nil {
		return nil, fmt.Errorf("deletion of user %s: %w", userID, mapErr(err))
	}
	return &d, nil
}

// CancelAccountDeletion drops the deletion scheduled for a user of the
// realm; none is ErrNotFound.
func (s *Store) CancelAccountDeletion(ctx context.Context, realmID, userID string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM account_deletions WHERE user_id = $1 AND realm_id = $2", userID, realmID)
	if err != nil {
		return fmt.Errorf("cancel deletion of user %s: %w", userID, mapErr(err))
	}
	return affectedOne(res, "deletion of user "+userID)
}

// DueAccountDeletions returns up to limit deletions, of every realm, whose
// grace window ended by now, the longest overdue first.
func (s *Store) DueAccountDeletions(ctx context.Context, now int64, limit int) ([]*AccountDeletion, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT d.user_id, d.realm_id, d.requested_at, d.delete_at, r.name
		FROM account_deletions d JOIN realms r ON r.id = d.realm_id
		WHERE d.delete_at <= $1 ORDER BY d.delete_at, d.user_id LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due account deletions: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*AccountDeletion{}
	for rows.Next() {
		var d AccountDeletion
		if err := rows.Scan(&d.UserID, &d.RealmID, &d.RequestedAt, &d.DeleteAt, &d.RealmName); err != nil {
			return nil, fmt.Errorf("read account deletion: %w", mapErr(err))
		}
		out = append(out, &d)
	}
	return out, mapErr(rows.Err())
}
