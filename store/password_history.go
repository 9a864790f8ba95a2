package store

import (
	"context"
	"fmt"
)

// ChangeUserPassword stores a new password hash, as SetUserPassword does,
// and keeps the hash it replaces among the user's previous ones, of which
// it keeps the newest keep (none when keep is 0). Both happen in one
// transaction, so two concurrent changes cannot lose a hash between them.
func (s *Store) ChangeUserPassword(ctx context.Context, realmID, userID, hash string, changedAt int64, requireReset bool, keep int) error {
	return s.Tx(ctx, func(tx *Store) error {
		if keep > 0 {
			// The old hash is read here, inside the transaction, not taken
			// from the caller: a change since the caller read the user
			// would otherwise be skipped.
			_, err := tx.w.ExecContext(ctx, `INSERT INTO password_history (realm_id, user_id, seq, password_hash, replaced_at)
				SELECT realm_id, id, COALESCE((SELECT MAX(seq) FROM password_history WHERE realm_id = $1 AND user_id = $2), 0) + 1,
					password_hash, $3
				FROM users WHERE realm_id = $1 AND id = $2 AND password_hash IS NOT NULL`, realmID, userID, changedAt)
			if err != nil {
				return fmt.Errorf("remember password of user %s: %w", userID, mapErr(err))
			}
		}
		_, err := tx.w.ExecContext(ctx, `DELETE FROM password_history WHERE realm_id = $1 AND user_id = $2
			AND seq <= (SELECT MAX(seq) FROM password_history WHERE realm_id = $1 AND user_id = $2) - $3`, realmID, userID, keep)
		if err != nil {
			return fmt.Errorf("prune password history of user %s: %w", userID, mapErr(err))
		}
		return tx.SetUserPassword(ctx, realmID, userID, hash, changedAt, requireReset)
	})
}

// PasswordHistory returns up to limit of the user's previous password
// hashes, newest first; the current one is not among them.
func (s *Store) PasswordHistory(ctx context.Context, realmID, userID string, limit int) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT password_hash FROM password_history WHERE realm_id = $1 AND user_id = $2
		ORDER BY seq DESC LIMIT $3`, realmID, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("password history of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	var hashes []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, mapErr(err)
		}
		hashes = append(hashes, h)
	}
	return hashes, mapErr(rows.Err())
}
