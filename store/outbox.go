package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// OutboxEmail is one message waiting in (or done with) the email outbox.
// The sender is not stored: it is the realm's at send time, so fixing a
// wrong sender address also fixes the mail still queued.
//
// The bodies carry single-use links (a password reset, a verification, an
// invitation), so they are never at rest in clear: a pending mail's are
// sealed with the master key, and a mail sent or given up keeps none. What
// stays is the recipient, the template, the state and the times.
type OutboxEmail struct {
	ID            string
	RealmID       string
	RealmName     string // read only: filled by DueEmails for the sender's lookup
	Recipient     string
	Template      string // the kind of mail: verify-email, reset-password, ...
	Subject       string
	HTMLBody      string // '' once sent or given up
	TextBody      string // '' once sent or given up
	Attempts      int
	NextAttemptAt int64 // Unix milliseconds
	LastError     string
	CreatedAt     int64
	SentAt        int64 // 0 while unsent
	FailedAt      int64 // 0 unless given up
}

// outboxBody is what the sealed column holds.
type outboxBody struct {
	HTML string `json:"html"`
	Text string `json:"text"`
}

func outboxAAD(id string) string { return "email_outbox.sealed:" + id }

// sealBody is e's bodies sealed to its row.
func (s *Store) sealBody(id, html, text string) ([]byte, error) {
	b, err := json.Marshal(outboxBody{HTML: html, Text: text})
	if err != nil {
		return nil, err
	}
	return s.seal(b, outboxAAD(id)), nil
}

// openBody fills e's bodies from its sealed column; nil leaves them empty.
func (s *Store) openBody(e *OutboxEmail, sealed []byte) error {
	if sealed == nil {
		return nil
	}
	plain, err := s.open(sealed, outboxAAD(e.ID))
	if err != nil {
		return err
	}
	var b outboxBody
	if err := json.Unmarshal(plain, &b); err != nil {
		return fmt.Errorf("outbox email %s: %w", e.ID, err)
	}
	e.HTMLBody, e.TextBody = b.HTML, b.Text
	return nil
}

// EnqueueEmail adds e to the outbox, due at e.NextAttemptAt, its bodies
// sealed. Called inside the caller's Tx, the mail exists exactly when the
// change that caused it does.
func (s *Store) EnqueueEmail(ctx context.Context, e *OutboxEmail) error {
	sealed, err := s.sealBody(e.ID, e.HTMLBody, e.TextBody)
	if err != nil {
		return fmt.Errorf("enqueue email %s: %w", e.ID, err)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO email_outbox (id, realm_id, recipient, template, subject, html_body,
		text_body, sealed, attempts, next_attempt_at, last_error, created_at)
		VALUES ($1, $2, $3, $4, $5, '', '', $6, 0, $7, '', $8)`,
		e.ID, e.RealmID, e.Recipient, e.Template, e.Subject, sealed, e.NextAttemptAt, e.CreatedAt)
	if err != nil {
		return fmt.Errorf("enqueue email %s: %w", e.ID, mapErr(err))
	}
	return nil
}

// DueEmails returns at most limit unsent mails due by now, the longest
// waiting first. Sent and abandoned mail is never due.
func (s *Store) DueEmails(ctx context.Context, now int64, limit int) ([]*OutboxEmail, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT o.id, o.realm_id, r.name, o.recipient, o.template, o.subject, o.sealed,
		o.attempts, o.next_attempt_at, o.last_error, o.created_at
		FROM email_outbox o JOIN realms r ON r.id = o.realm_id
		WHERE o.sent_at IS NULL AND o.failed_at IS NULL AND o.next_attempt_at <= $1
		ORDER BY o.next_attempt_at, o.created_at LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due emails: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*OutboxEmail
	for rows.Next() {
		var e OutboxEmail
		var sealed []byte
		if err := rows.Scan(&e.ID, &e.RealmID, &e.RealmName, &e.Recipient, &e.Template, &e.Subject, &sealed,
			&e.Attempts, &e.NextAttemptAt, &e.LastError, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("due emails: %w", mapErr(err))
		}
		if err := s.openBody(&e, sealed); err != nil {
			return nil, fmt.Errorf("due emails: %w", err)
		}
		out = append(out, &e)
	}
	return out, mapErr(rows.Err())
}

// GetOutboxEmail reads one outbox row, whatever its state.
func (s *Store) GetOutboxEmail(ctx context.Context, id string) (*OutboxEmail, error) {
	var e OutboxEmail
	var sent, failed sql.NullInt64
	var sealed []byte
	err := s.r.QueryRowContext(ctx, `SELECT o.id, o.realm_id, r.name, o.recipient, o.template, o.subject, o.sealed,
		o.attempts, o.next_attempt_at, o.last_error, o.created_at, o.sent_at, o.failed_at
		FROM email_outbox o JOIN realms r ON r.id = o.realm_id WHERE o.id = $1`, id).Scan(
		&e.ID, &e.RealmID, &e.RealmName, &e.Recipient, &e.Template, &e.Subject, &sealed,
		&e.Attempts, &e.NextAttemptAt, &e.LastError, &e.CreatedAt, &sent, &failed)
	if err != nil {
		return nil, fmt.Errorf("outbox email %s: %w", id, mapErr(err))
	}
	e.SentAt, e.FailedAt = sent.Int64, failed.Int64
	if err := s.openBody(&e, sealed); err != nil {
		return nil, err
	}
	return &e, nil
}

// MarkEmailSent records a successful send and drops the mail's bodies. A
// mail already sent or given up is ErrNotFound, so a second worker's send
// shows up as an error.
func (s *Store) MarkEmailSent(ctx context.Context, id string, attempts int, now int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE email_outbox SET sent_at = $1, attempts = $2, last_error = '', sealed = NULL
		WHERE id = $3 AND sent_at IS NULL AND failed_at IS NULL`, now, attempts, id)
	n, err := rowsAffected(res, err, "mark email "+id+" sent")
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("pending email %s: %w", id, ErrNotFound)
	}
	return nil
}

// MarkEmailFailed records a failed attempt: attempts is the count so far
// and lastError why it failed. A retryAt above zero schedules the next
// attempt; zero gives up, stamping failed_at with now and dropping the
// bodies. The row stays, for the record.
func (s *Store) MarkEmailFailed(ctx context.Context, id string, attempts int, lastError string, retryAt, now int64) error {
	var res sql.Result
	var err error
	if retryAt > 0 {
		res, err = s.w.ExecContext(ctx, `UPDATE email_outbox SET attempts = $1, last_error = $2, next_attempt_at = $3
			WHERE id = $4 AND sent_at IS NULL AND failed_at IS NULL`, attempts, lastError, retryAt, id)
	} else {
		res, err = s.w.ExecContext(ctx, `UPDATE email_outbox SET attempts = $1, last_error = $2, failed_at = $3,
			sealed = NULL WHERE id = $4 AND sent_at IS NULL AND failed_at IS NULL`, attempts, lastError, now, id)
	}
	n, err := rowsAffected(res, err, "mark email "+id+" failed")
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("pending email %s: %w", id, ErrNotFound)
	}
	return nil
}

// DeleteFinishedEmails deletes the record of mail sent or given up before
// before (Unix milliseconds), and returns how many rows went. Pending mail
// stays, whatever its age.
func (s *Store) DeleteFinishedEmails(ctx context.Context, before int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM email_outbox WHERE sent_at < $1 OR failed_at < $1`, before)
	return rowsAffected(res, err, "delete finished emails")
}
