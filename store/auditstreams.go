package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// AuditStream is a realm's destination of its events (app/auditstreams).
// Settings are the destination's, as JSON the module reads; Secret (a
// token, an Authorization header) is clear here and sealed at rest.
type AuditStream struct {
	ID          string
	RealmID     string
	Type        string // syslog, http, file
	Events      []string
	Enabled     bool
	Description string
	Settings    []byte
	Secret      string
	CreatedAt   int64
	UpdatedAt   int64
}

// AuditCursor is how far a stream has gone through its realm's records.
type AuditCursor struct {
	StreamID string
	RealmID  string
	// DeliveredSeq is the last sequence the stream has passed: every
	// record up to it was accepted by the destination, or not of a type
	// the stream takes.
	DeliveredSeq  int64
	Failures      int   // failed attempts since the last success
	NextAttemptAt int64 // 0 when due at once
	LastError     string
	LastErrorAt   int64 // 0 when none
	DeliveredAt   int64 // the last success; 0 when none
}

// AuditRecord is one event of a realm, numbered by the realm's sequence.
type AuditRecord struct {
	RealmID   string
	Seq       int64
	EventID   string
	EventType string
	CreatedAt int64
	Payload   []byte // the event's JSON (app/bus)
}

const auditStreamColumns = `id, realm_id, type, events, enabled, description, settings, secret, created_at, updated_at`

func auditSecretAAD(id string) string { return "audit_streams.secret:" + id }

func (s *Store) scanAuditStream(row scanner) (*AuditStream, error) {
	var a AuditStream
	var events, settings string
	var secret []byte
	if err := row.Scan(&a.ID, &a.RealmID, &a.Type, &events, &a.Enabled, &a.Description, &settings, &secret,
		&a.CreatedAt, &a.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := json.Unmarshal([]byte(events), &a.Events); err != nil {
		return nil, fmt.Errorf("events of audit stream %s: %w", a.ID, err)
	}
	a.Settings = []byte(settings)
	plain, err := s.open(secret, auditSecretAAD(a.ID))
	if err != nil {
		return nil, err
	}
	a.Secret = string(plain)
	return &a, nil
}

// auditStreamValues are a's column values, in auditStreamColumns' order.
func (s *Store) auditStreamValues(a *AuditStream) []any {
	events, _ := json.Marshal(a.Events)
	var secret []byte
	if a.Secret != "" {
		secret = s.seal([]byte(a.Secret), auditSecretAAD(a.ID))
	}
	return []any{a.ID, a.RealmID, a.Type, string(events), a.Enabled, a.Description, string(a.Settings), secret,
		a.CreatedAt, a.UpdatedAt}
}

// CreateAuditStream stores a new stream with its cursor at the realm's
// last record: a stream gets the events from its creation on, not the
// history.
func (s *Store) CreateAuditStream(ctx context.Context, a *AuditStream) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, "INSERT INTO audit_streams ("+auditStreamColumns+") VALUES ("+placeholders(10)+")",
			tx.auditStreamValues(a)...); err != nil {
			return fmt.Errorf("create audit stream: %w", mapErr(err))
		}
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO audit_stream_cursors (stream_id, realm_id, delivered_seq, failures,
			next_attempt_at, last_error, last_error_at, delivered_at)
			VALUES ($1, $2, COALESCE((SELECT seq FROM audit_sequences WHERE realm_id = $2), 0), 0, 0, '', 0, 0)`,
			a.ID, a.RealmID); err != nil {
			return fmt.Errorf("create audit stream cursor: %w", mapErr(err))
		}
		return nil
	})
}

// GetAuditStream finds a stream of a realm by ID.
func (s *Store) GetAuditStream(ctx context.Context, realmID, id string) (*AuditStream, error) {
	a, err := s.scanAuditStream(s.r.QueryRowContext(ctx,
		"SELECT "+auditStreamColumns+" FROM audit_streams WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", id, err)
	}
	return a, nil
}

// ListAuditStreams lists a realm's streams, oldest first.
func (s *Store) ListAuditStreams(ctx context.Context, realmID string) ([]*AuditStream, error) {
	return s.queryAuditStreams(ctx, "SELECT "+auditStreamColumns+" FROM audit_streams WHERE realm_id = $1 ORDER BY created_at, id",
		realmID)
}

// EnabledAuditStreams lists a realm's enabled streams: those that take its
// events.
func (s *Store) EnabledAuditStreams(ctx context.Context, realmID string) ([]*AuditStream, error) {
	return s.queryAuditStreams(ctx, "SELECT "+auditStreamColumns+` FROM audit_streams WHERE realm_id = $1 AND enabled
		ORDER BY created_at, id`, realmID)
}

// AllEnabledAuditStreams lists every realm's enabled streams: the
// worker's.
func (s *Store) AllEnabledAuditStreams(ctx context.Context) ([]*AuditStream, error) {
	return s.queryAuditStreams(ctx, "SELECT "+auditStreamColumns+" FROM audit_streams WHERE enabled ORDER BY created_at, id")
}

// AuditStreamsOfType lists the streams of one type in every realm.
func (s *Store) AuditStreamsOfType(ctx context.Context, typ string) ([]*AuditStream, error) {
	return s.queryAuditStreams(ctx, "SELECT "+auditStreamColumns+" FROM audit_streams WHERE type = $1 ORDER BY created_at, id", typ)
}

func (s *Store) queryAuditStreams(ctx context.Context, query string, args ...any) ([]*AuditStream, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit streams: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*AuditStream{}
	for rows.Next() {
		a, err := s.scanAuditStream(rows)
		if err != nil {
			return nil, fmt.Errorf("list audit streams: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit streams: %w", mapErr(err))
	}
	return out, nil
}

// UpdateAuditStream writes every field of a but its realm, type and
// creation time. restart moves its cursor to the realm's last record and
// forgets its failures: a stream enabled again takes the events from then
// on, as a new one does.
func (s *Store) UpdateAuditStream(ctx context.Context, a *AuditStream, restart bool) error {
	return s.Tx(ctx, func(tx *Store) error {
		v := tx.auditStreamValues(a)
		res, err := tx.w.ExecContext(ctx, `UPDATE audit_streams SET events = $3, enabled = $4, description = $5, settings = $6,
			secret = $7, updated_at = $8 WHERE id = $1 AND realm_id = $2`, v[0], v[1], v[3], v[4], v[5], v[6], v[7], v[9])
		n, err := rowsAffected(res, err, "update audit stream "+a.ID)
		if err == nil && n == 0 {
			err = fmt.Errorf("audit stream %s: %w", a.ID, ErrNotFound)
		}
		if err != nil || !restart {
			return err
		}
		if _, err := tx.w.ExecContext(ctx, `UPDATE audit_stream_cursors SET
			delivered_seq = COALESCE((SELECT seq FROM audit_sequences WHERE realm_id = $2), 0),
			failures = 0, next_attempt_at = 0 WHERE stream_id = $1`, a.ID, a.RealmID); err != nil {
			return fmt.Errorf("restart audit stream %s: %w", a.ID, mapErr(err))
		}
		return nil
	})
}

// DeleteAuditStream deletes a stream with its cursor.
func (s *Store) DeleteAuditStream(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM audit_streams WHERE realm_id = $1 AND id = $2", realmID, id)
	n, err := rowsAffected(res, err, "delete audit stream "+id)
	if err == nil && n == 0 {
		err = fmt.Errorf("audit stream %s: %w", id, ErrNotFound)
	}
	return err
}

const auditCursorColumns = `stream_id, realm_id, delivered_seq, failures, next_attempt_at, last_error, last_error_at, delivered_at`

func scanAuditCursor(row scanner) (*AuditCursor, error) {
	var c AuditCursor
	if err := row.Scan(&c.StreamID, &c.RealmID, &c.DeliveredSeq, &c.Failures, &c.NextAttemptAt, &c.LastError, &c.LastErrorAt,
		&c.DeliveredAt); err != nil {
		return nil, mapErr(err)
	}
	return &c, nil
}

// AuditCursor is a stream's cursor.
func (s *Store) AuditCursor(ctx context.Context, streamID string) (*AuditCursor, error) {
	c, err := scanAuditCursor(s.r.QueryRowContext(ctx, "SELECT "+auditCursorColumns+" FROM audit_stream_cursors WHERE stream_id = $1",
		streamID))
	if err != nil {
		return nil, fmt.Errorf("cursor of audit stream %s: %w", streamID, err)
	}
	return c, nil
}

// AuditCursors are the cursors of a realm's streams, by stream ID.
func (s *Store) AuditCursors(ctx context.Context, realmID string) (map[string]*AuditCursor, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+auditCursorColumns+" FROM audit_stream_cursors WHERE realm_id = $1", realmID)
	if err != nil {
		return nil, fmt.Errorf("audit stream cursors: %w", mapErr(err))
	}
	defer rows.Close()
	out := map[string]*AuditCursor{}
	for rows.Next() {
		c, err := scanAuditCursor(rows)
		if err != nil {
			return nil, fmt.Errorf("audit stream cursors: %w", err)
		}
		out[c.StreamID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit stream cursors: %w", mapErr(err))
	}
	return out, nil
}

// AuditSequence is the sequence of a realm's last record; 0 before its
// first.
func (s *Store) AuditSequence(ctx context.Context, realmID string) (int64, error) {
	var seq int64
	err := s.r.QueryRowContext(ctx, "SELECT COALESCE((SELECT seq FROM audit_sequences WHERE realm_id = $1), 0)", realmID).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("audit sequence of realm %s: %w", realmID, mapErr(err))
	}
	return seq, nil
}

// AddAuditRecord numbers r with its realm's next sequence and stores it,
// in the caller's transaction: the event and its record commit together.
// Every write transaction holds the one writer (SQLite) or the fleet's
// write lock (PostgreSQL) to its end, so the numbers have no gaps and
// commit in their order.
func (s *Store) AddAuditRecord(ctx context.Context, r *AuditRecord) error {
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.w.QueryRowContext(ctx, `INSERT INTO audit_sequences (realm_id, seq) VALUES ($1, 1)
			ON CONFLICT (realm_id) DO UPDATE SET seq = audit_sequences.seq + 1 RETURNING seq`, r.RealmID).Scan(&r.Seq); err != nil {
			return fmt.Errorf("number audit record: %w", mapErr(err))
		}
		if _, err := tx.w.ExecContext(ctx, `INSERT INTO audit_records (realm_id, seq, event_id, event_type, created_at, payload)
			VALUES ($1, $2, $3, $4, $5, $6)`, r.RealmID, r.Seq, r.EventID, r.EventType, r.CreatedAt, r.Payload); err != nil {
			return fmt.Errorf("add audit record: %w", mapErr(err))
		}
		return nil
	})
}

// AuditRecordsAfter lists a realm's records after sequence after, in
// order, at most limit.
func (s *Store) AuditRecordsAfter(ctx context.Context, realmID string, after int64, limit int) ([]*AuditRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT realm_id, seq, event_id, event_type, created_at, payload FROM audit_records
		WHERE realm_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, realmID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("audit records: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*AuditRecord
	for rows.Next() {
		var r AuditRecord
		if err := rows.Scan(&r.RealmID, &r.Seq, &r.EventID, &r.EventType, &r.CreatedAt, &r.Payload); err != nil {
			return nil, fmt.Errorf("audit records: %w", mapErr(err))
		}
		out = append(out, &r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit records: %w", mapErr(err))
	}
	return out, nil
}

// AdvanceAuditCursor records that a stream has passed every record up to
// seq, at, and forgets its failures. A cursor never moves back: a stream
// restarted meanwhile keeps its newer place.
func (s *Store) AdvanceAuditCursor(ctx context.Context, streamID string, seq, at int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE audit_stream_cursors SET delivered_seq = $2, failures = 0, next_attempt_at = 0,
		delivered_at = $3 WHERE stream_id = $1 AND delivered_seq < $2`, streamID, seq, at)
	if err != nil {
		return fmt.Errorf("advance audit stream %s: %w", streamID, mapErr(err))
	}
	return nil
}

// FailAuditCursor records a failed attempt of a stream at at, and when
// to try again; its cursor stays.
func (s *Store) FailAuditCursor(ctx context.Context, streamID, lastError string, at, next int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE audit_stream_cursors SET failures = failures + 1, next_attempt_at = $4,
		last_error = $2, last_error_at = $3 WHERE stream_id = $1`, streamID, lastError, at, next)
	if err != nil {
		return fmt.Errorf("audit stream %s failure: %w", streamID, mapErr(err))
	}
	return nil
}

// PurgeAuditRecords deletes the records every enabled stream of their
// realm has passed (all of a realm without one) and counts them.
func (s *Store) PurgeAuditRecords(ctx context.Context) (int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT q.realm_id, COALESCE((SELECT MIN(c.delivered_seq) FROM audit_stream_cursors c
		JOIN audit_streams a ON a.id = c.stream_id AND a.enabled WHERE c.realm_id = q.realm_id), q.seq) FROM audit_sequences q`)
	if err != nil {
		return 0, fmt.Errorf("purge audit records: %w", mapErr(err))
	}
	type passed struct {
		realmID string
		seq     int64
	}
	var realms []passed
	for rows.Next() {
		var p passed
		if err := rows.Scan(&p.realmID, &p.seq); err != nil {
			rows.Close()
			return 0, fmt.Errorf("purge audit records: %w", mapErr(err))
		}
		realms = append(realms, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("purge audit records: %w", mapErr(err))
	}
	var total int64
	for _, p := range realms {
		res, err := s.w.ExecContext(ctx, "DELETE FROM audit_records WHERE realm_id = $1 AND seq <= $2", p.realmID, p.seq)
		n, err := rowsAffected(res, err, "purge audit records of realm "+p.realmID)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
