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

// TermsAcceptance is a user's acceptance of a version of the realm's
// terms.
type TermsAcceptance struct {
	Version    string
	AcceptedAt int64 // Unix milliseconds
}

// UserTermsAcceptances lists the versions of the realm's terms the user
// accepted, newest first.
func (s *Store) UserTermsAcceptances(ctx context.Context, realmID, userID string) ([]TermsAcceptance, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT version, accepted_at FROM terms_acceptances WHERE realm_id = $1 AND user_id = $2
		ORDER BY accepted_at DESC, version`, realmID, userID)
	if err != nil {
		return nil, fmt.Errorf("terms accepted by user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	out := []TermsAcceptance{}
	for rows.Next() {
		var a TermsAcceptance
		if err := rows.Scan(&a.Version, &a.AcceptedAt); err != nil {
			return nil, fmt.Errorf("read terms acceptance: %w", mapErr(err))
		}
		out = append(out, a)
	}
	return out, mapErr(rows.Err())
}
