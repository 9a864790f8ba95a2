package store

import (
	"context"
	"fmt"
)

// NHIAudit is one record of the identities' audit log.
type NHIAudit struct {
	ID           string
	RealmID      string
	Time         int64 // Unix milliseconds
	NHIID        string
	NHIName      string
	CredentialID string
	Action       string
	ActorType    string
	ActorID      string
	ActorName    string
	IPAddress    string
	Details      string
}

const nhiAuditColumns = `id, realm_id, time, nhi_id, nhi_name, credential_id, action, actor_type, actor_id, actor_name,
	ip_address, details`

// AddNHIAudit appends a record to the audit log.
func (s *Store) AddNHIAudit(ctx context.Context, a *NHIAudit) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO nhi_audit_logs (`+nhiAuditColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		a.ID, a.RealmID, a.Time, a.NHIID, a.NHIName, a.CredentialID, a.Action, a.ActorType, a.ActorID, a.ActorName,
		a.IPAddress, a.Details)
	if err != nil {
		return fmt.Errorf("add audit record of identity %s: %w", a.NHIID, mapErr(err))
	}
	return nil
}

// NHIAuditFilter narrows the audit log; empty fields do not.
type NHIAuditFilter struct {
	NHIID        string
	CredentialID string
	Action       string
	ActorID      string
	From, To     int64 // Unix milliseconds, inclusive; 0: open
}

// ListNHIAudit lists one page of the realm's audit log, newest first.
func (s *Store) ListNHIAudit(ctx context.Context, realmID string, f NHIAuditFilter, first, max int) ([]*NHIAudit, error) {
	to := f.To
	if to == 0 {
		to = 1<<63 - 1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+nhiAuditColumns+` FROM nhi_audit_logs
		WHERE realm_id = $1 AND ($2 = '' OR nhi_id = $2) AND ($3 = '' OR credential_id = $3) AND ($4 = '' OR action = $4)
			AND ($5 = '' OR actor_id = $5) AND time >= $6 AND time <= $7
		ORDER BY time DESC, id DESC LIMIT $8 OFFSET $9`,
		realmID, f.NHIID, f.CredentialID, f.Action, f.ActorID, f.From, to, max, first)
	if err != nil {
		return nil, fmt.Errorf("list audit log: %w", mapErr(err))
	}
	defer rows.Close()
	var out []*NHIAudit
	for rows.Next() {
		var a NHIAudit
		if err := rows.Scan(&a.ID, &a.RealmID, &a.Time, &a.NHIID, &a.NHIName, &a.CredentialID, &a.Action, &a.ActorType,
			&a.ActorID, &a.ActorName, &a.IPAddress, &a.Details); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, &a)
	}
	return out, mapErr(rows.Err())
}

// DeleteNHIAudit deletes the realm's audit records older than before
// (Unix milliseconds; 0 deletes them all) and says how many.
func (s *Store) DeleteNHIAudit(ctx context.Context, realmID string, before int64) (int64, error) {
	if before == 0 {
		before = 1<<63 - 1
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM nhi_audit_logs WHERE realm_id = $1 AND time < $2`, realmID, before)
	if err != nil {
		return 0, fmt.Errorf("delete audit log: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}
