package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Reads for a user's copy of their data: what the other areas of the
// store keep about them and have no listing for.

// UserActionTokens lists a user's mailed-link tokens, newest first. The
// hashes are left out: a copy of the data is no place for them.
func (s *Store) UserActionTokens(ctx context.Context, realmID, userID string) ([]*ActionToken, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT realm_id, user_id, kind, email, created_at, expires_at, used_at
		FROM action_tokens WHERE user_id = $1 AND realm_id = $2 ORDER BY created_at DESC, kind`, userID, realmID)
	if err != nil {
		return nil, fmt.Errorf("action tokens of user %s: %w", userID, mapErr(err))
	}
	defer rows.Close()
	out := []*ActionToken{}
	for rows.Next() {
		var t ActionToken
		var used sql.NullInt64
		if err := rows.Scan(&t.RealmID, &t.UserID, &t.Kind, &t.Email, &t.CreatedAt, &t.ExpiresAt, &used); err != nil {
			return nil, fmt.Errorf("read action token: %w", mapErr(err))
		}
		t.UsedAt = used.Int64
		out = append(out, &t)
	}
	return out, mapErr(rows.Err())
}

// EmailsTo lists the realm's outbox mail to an address, newest first,
// without bodies: those carry single-use links.
func (s *Store) EmailsTo(ctx context.Context, realmID, recipient string) ([]*OutboxEmail, error) {
	if recipient == "" {
		return []*OutboxEmail{}, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, realm_id, recipient, subject, attempts, created_at, sent_at, failed_at
		FROM email_outbox WHERE realm_id = $1 AND recipient = $2 ORDER BY created_at DESC, id`, realmID, recipient)
	if err != nil {
		return nil, fmt.Errorf("emails to %s: %w", recipient, mapErr(err))
	}
	defer rows.Close()
	out := []*OutboxEmail{}
	for rows.Next() {
		var e OutboxEmail
		var sent, failed sql.NullInt64
		if err := rows.Scan(&e.ID, &e.RealmID, &e.Recipient, &e.Subject, &e.Attempts, &e.CreatedAt, &sent, &failed); err != nil {
			return nil, fmt.Errorf("read email: %w", mapErr(err))
		}
		e.SentAt, e.FailedAt = sent.Int64, failed.Int64
		out = append(out, &e)
	}
	return out, mapErr(rows.Err())
}
