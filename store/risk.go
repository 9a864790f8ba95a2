package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A realm's risk settings (app/risk), as the module's JSON.

// RiskSettings answers the realm's risk settings; ErrNotFound when it
// keeps the defaults.
func (s *Store) RiskSettings(ctx context.Context, realmID string) (string, error) {
	var v string
	err := s.r.QueryRowContext(ctx, "SELECT settings FROM risk_settings WHERE realm_id = $1", realmID).Scan(&v)
	if err != nil {
		return "", fmt.Errorf("risk settings: %w", mapErr(err))
	}
	return v, nil
}

// PutRiskSettings replaces the realm's risk settings.
func (s *Store) PutRiskSettings(ctx context.Context, realmID, settings string, now int64) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM risk_settings WHERE realm_id = $1", realmID); err != nil {
			return fmt.Errorf("risk settings: %w", mapErr(err))
		}
		_, err := tx.w.ExecContext(ctx, "INSERT INTO risk_settings (realm_id, settings, updated_at) VALUES ($1, $2, $3)",
			realmID, settings, now)
		if err != nil {
			return fmt.Errorf("risk settings: %w", mapErr(err))
		}
		return nil
	})
}

// RiskPolicy is a realm's risk policy; Conditions is the module's JSON.
type RiskPolicy struct {
	ID          string
	RealmID     string
	Name        string
	Description string
	Enabled     bool
	Priority    int
	Conditions  string
	Action      string
	Scope       string // sign-in or session: what the policy decides
	CreatedAt   int64
	UpdatedAt   int64
}

const riskPolicyColumns = `id, realm_id, name, description, enabled, priority, conditions, action, scope, created_at, updated_at`

func scanRiskPolicy(row scanner) (*RiskPolicy, error) {
	var p RiskPolicy
	err := row.Scan(&p.ID, &p.RealmID, &p.Name, &p.Description, &p.Enabled, &p.Priority, &p.Conditions, &p.Action,
		&p.Scope, &p.CreatedAt, &p.UpdatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	return &p, nil
}

// CreateRiskPolicy stores a new policy; ErrConflict for a name the realm
// has.
func (s *Store) CreateRiskPolicy(ctx context.Context, p *RiskPolicy) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO risk_policies ("+riskPolicyColumns+") VALUES ("+placeholders(11)+")",
		p.ID, p.RealmID, p.Name, p.Description, p.Enabled, p.Priority, p.Conditions, p.Action, p.Scope, p.CreatedAt, p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("create risk policy: %w", mapErr(err))
	}
	return nil
}

// GetRiskPolicy finds a policy of the realm.
func (s *Store) GetRiskPolicy(ctx context.Context, realmID, id string) (*RiskPolicy, error) {
	p, err := scanRiskPolicy(s.r.QueryRowContext(ctx, "SELECT "+riskPolicyColumns+" FROM risk_policies WHERE realm_id = $1 AND id = $2",
		realmID, id))
	if err != nil {
		return nil, fmt.Errorf("risk policy %s: %w", id, err)
	}
	return p, nil
}

// ListRiskPolicies lists the realm's policies in the order they decide:
// priority, then the oldest first.
func (s *Store) ListRiskPolicies(ctx context.Context, realmID string) ([]*RiskPolicy, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+riskPolicyColumns+" FROM risk_policies WHERE realm_id = $1 ORDER BY priority, created_at, id",
		realmID)
	if err != nil {
		return nil, fmt.Errorf("list risk policies: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*RiskPolicy{}
	for rows.Next() {
		p, err := scanRiskPolicy(rows)
		if err != nil {
			return nil, fmt.Errorf("list risk policies: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list risk policies: %w", mapErr(err))
	}
	return out, nil
}

// UpdateRiskPolicy writes every field of p but its realm and creation
// time.
func (s *Store) UpdateRiskPolicy(ctx context.Context, p *RiskPolicy) error {
	res, err := s.w.ExecContext(ctx, `UPDATE risk_policies SET name = $3, description = $4, enabled = $5, priority = $6,
		conditions = $7, action = $8, scope = $9, updated_at = $10 WHERE realm_id = $1 AND id = $2`,
		p.RealmID, p.ID, p.Name, p.Description, p.Enabled, p.Priority, p.Conditions, p.Action, p.Scope, p.UpdatedAt)
	n, err := rowsAffected(res, err, "update risk policy "+p.ID)
	if err == nil && n == 0 {
		err = fmt.Errorf("risk policy %s: %w", p.ID, ErrNotFound)
	}
	return err
}

// DeleteRiskPolicy deletes a policy; the assessments it decided keep its
// ID and name.
func (s *Store) DeleteRiskPolicy(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, "DELETE FROM risk_policies WHERE realm_id = $1 AND id = $2", realmID, id)
	n, err := rowsAffected(res, err, "delete risk policy "+id)
	if err == nil && n == 0 {
		err = fmt.Errorf("risk policy %s: %w", id, ErrNotFound)
	}
	return err
}

// RiskAssessment is the assessment of one sign-in. Signals and Weights
// are the module's JSON; Present lists the signals present, each between
// commas, for the filter by signal.
type RiskAssessment struct {
	ID          string
	RealmID     string
	UserID      string
	FlowID      string
	Kind        string
	ClientID    string
	IPAddress   string
	Network     string
	DeviceHash  []byte
	UserAgent   string
	Country     string
	Located     bool
	LatitudeE6  int64
	LongitudeE6 int64
	Score       int
	Level       string
	Signals     string
	Present     string
	Weights     string
	PolicyID    string
	PolicyName  string
	Action      string
	Outcome     string
	CreatedAt   int64
}

// The outcomes of an assessed sign-in.
const (
	RiskPending   = "pending"
	RiskSucceeded = "succeeded"
)

const riskAssessmentColumns = `id, realm_id, user_id, flow_id, kind, client_id, ip_address, network, device_hash, user_agent,
	country, located, latitude_e6, longitude_e6, score, level, signals, present, weights, policy_id, policy_name, action,
	outcome, created_at`

func scanRiskAssessment(row scanner) (*RiskAssessment, error) {
	var a RiskAssessment
	err := row.Scan(&a.ID, &a.RealmID, &a.UserID, &a.FlowID, &a.Kind, &a.ClientID, &a.IPAddress, &a.Network, &a.DeviceHash,
		&a.UserAgent, &a.Country, &a.Located, &a.LatitudeE6, &a.LongitudeE6, &a.Score, &a.Level, &a.Signals, &a.Present,
		&a.Weights, &a.PolicyID, &a.PolicyName, &a.Action, &a.Outcome, &a.CreatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	return &a, nil
}

// AddRiskAssessment stores an assessment.
func (s *Store) AddRiskAssessment(ctx context.Context, a *RiskAssessment) error {
	var device any
	if a.DeviceHash != nil {
		device = a.DeviceHash
	}
	_, err := s.w.ExecContext(ctx, "INSERT INTO risk_assessments ("+riskAssessmentColumns+") VALUES ("+placeholders(24)+")",
		a.ID, a.RealmID, a.UserID, a.FlowID, a.Kind, a.ClientID, a.IPAddress, a.Network, device, a.UserAgent, a.Country,
		a.Located, a.LatitudeE6, a.LongitudeE6, a.Score, a.Level, a.Signals, a.Present, a.Weights, a.PolicyID, a.PolicyName,
		a.Action, a.Outcome, a.CreatedAt)
	if err != nil {
		return fmt.Errorf("add risk assessment: %w", mapErr(err))
	}
	return nil
}

// RiskAssessmentOfFlow finds the assessment of a sign-in flow.
func (s *Store) RiskAssessmentOfFlow(ctx context.Context, realmID, flowID string) (*RiskAssessment, error) {
	a, err := scanRiskAssessment(s.r.QueryRowContext(ctx, "SELECT "+riskAssessmentColumns+
		" FROM risk_assessments WHERE flow_id = $1 AND realm_id = $2", flowID, realmID))
	if err != nil {
		return nil, fmt.Errorf("risk assessment of flow %s: %w", flowID, err)
	}
	return a, nil
}

// GetRiskAssessment finds an assessment of the realm.
func (s *Store) GetRiskAssessment(ctx context.Context, realmID, id string) (*RiskAssessment, error) {
	a, err := scanRiskAssessment(s.r.QueryRowContext(ctx, "SELECT "+riskAssessmentColumns+
		" FROM risk_assessments WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("risk assessment %s: %w", id, err)
	}
	return a, nil
}

// SucceedRiskAssessment marks an assessed sign-in as signed in.
func (s *Store) SucceedRiskAssessment(ctx context.Context, id string) error {
	_, err := s.w.ExecContext(ctx, "UPDATE risk_assessments SET outcome = $2 WHERE id = $1", id, RiskSucceeded)
	if err != nil {
		return fmt.Errorf("risk assessment %s: %w", id, mapErr(err))
	}
	return nil
}

// RiskHistory is the user's newest limit sign-ins that succeeded, newest
// first: what a new one is compared with.
func (s *Store) RiskHistory(ctx context.Context, userID string, limit int) ([]*RiskAssessment, error) {
	return s.queryRiskAssessments(ctx, "SELECT "+riskAssessmentColumns+
		" FROM risk_assessments WHERE user_id = $1 AND outcome = $2 ORDER BY created_at DESC, id DESC LIMIT $3",
		userID, RiskSucceeded, limit)
}

// RiskFilter selects a realm's assessments; zero fields select all.
type RiskFilter struct {
	UserID   string
	Level    string
	Signal   string
	From, To int64 // Unix milliseconds; To excluded
}

func (f RiskFilter) where(realmID string) (string, []any) {
	w := newWhere("realm_id = $1", realmID)
	if f.UserID != "" {
		w.add("user_id = $%d", f.UserID)
	}
	if f.Level != "" {
		w.add("level = $%d", f.Level)
	}
	if f.Signal != "" {
		w.add("present LIKE $%d", "%,"+f.Signal+",%")
	}
	if f.From > 0 {
		w.add("created_at >= $%d", f.From)
	}
	if f.To > 0 {
		w.add("created_at < $%d", f.To)
	}
	return w.clause()
}

// ListRiskAssessments lists the realm's assessments that f selects,
// newest first, from first, at most max.
func (s *Store) ListRiskAssessments(ctx context.Context, realmID string, f RiskFilter, first, max int) ([]*RiskAssessment, error) {
	where, args := f.where(realmID)
	args = append(args, max, first)
	return s.queryRiskAssessments(ctx, "SELECT "+riskAssessmentColumns+" FROM risk_assessments"+where+
		fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d", len(args)-1, len(args)), args...)
}

// EachRiskOutline calls fn with the level and the signals present of
// each of the realm's assessments that f selects: the dashboard's counts.
func (s *Store) EachRiskOutline(ctx context.Context, realmID string, f RiskFilter, fn func(level, present string)) error {
	where, args := f.where(realmID)
	rows, err := s.r.QueryContext(ctx, "SELECT level, present FROM risk_assessments"+where, args...)
	if err != nil {
		return fmt.Errorf("risk dashboard: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var level, present string
		if err := rows.Scan(&level, &present); err != nil {
			return fmt.Errorf("risk dashboard: %w", mapErr(err))
		}
		fn(level, present)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("risk dashboard: %w", mapErr(err))
	}
	return nil
}

func (s *Store) queryRiskAssessments(ctx context.Context, query string, args ...any) ([]*RiskAssessment, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list risk assessments: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*RiskAssessment{}
	for rows.Next() {
		a, err := scanRiskAssessment(rows)
		if err != nil {
			return nil, fmt.Errorf("list risk assessments: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list risk assessments: %w", mapErr(err))
	}
	return out, nil
}
