package store

import (
	"context"
	"fmt"
)

// AcceptTerms records that the user accepted version of the realm's
// terms at (Unix milliseconds). Accepting a version again keeps the
// first time.
func (s *Store) AcceptTerms(ctx context.Context, realmID, userID, version string, at int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.userOfRealm(ctx, realmID, userID); err != nil {
			return err
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO terms_acceptances (realm_id, user_id, version, accepted_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, version) DO NOTHING`, realmID, userID, version, at)
		if err != nil {
			return fmt.Errorf("accept terms %q for user %s: %w", version, userID, mapErr(err))
		}
		return nil
	})
}

// TermsAcceptedAt is when the user accepted version of the realm's terms,
// or ErrNotFound.
func (s *Store) TermsAcceptedAt(ctx context.Context, realmID, userID, version string) (int64, error) {
	var at int64
	err := s.r.QueryRowContext(ctx, `SELECT accepted_at FROM terms_acceptances WHERE realm_id = $1 AND user_id = $2 AND version = $3`,
		realmID, userID, version).Scan(&at)
	if err != nil {
		return 0, fmt.Errorf("terms %q accepted by user %s: %w", version, userID, mapErr(err))
	}
	return at, nil
}
