package store

import (
	"context"
	"fmt"
)

// Session risk and continuous verification (app/risk): a profile per SSO
// session, the events of what each observation of it saw, the refresh
// tokens of the sessions a policy ended, and each user's baseline of
// behaviour. The module owns the JSON the rows carry. None of these tables
// is read by a cache: writing them moves no generation (uncachedTables),
// and a session a policy ends goes through DeleteSession like any other.

// SessionRisk is the risk profile of an SSO session. Signals, Places,
// DevicePosture, NetworkContext and Behavior are the module's JSON;
// Present lists the signals present, each between commas.
type SessionRisk struct {
	SessionID      string
	RealmID        string
	UserID         string
	AssessmentID   string // the sign-in's assessment; "" when the sign-in was not assessed
	ClientID       string // the clientId the session signed in for
	Score          int
	Level          string
	Signals        string
	Present        string
	Places         string
	IPAddress      string // the last address the session was seen at
	Country        string
	DevicePosture  string // "" until the client SDK reports
	PostureAt      int64
	NetworkContext string
	NetworkAt      int64
	Behavior       string
	BehaviorAt     int64
	PolicyID       string // the session policy that decided last; "" for none
	PolicyName     string
	Action         string
	EndedBy        string // "", or the action that ended the session
	StepUpOwed     bool   // the user's next sign-in must prove a second factor
	Observations   int    // the row's version: SaveSessionRisk swaps on it
	StartedAt      int64
	UpdatedAt      int64

	// Filled by reads.
	Username string
	Active   bool // the SSO session is live at the read's time
}

// The statuses a profile's session is in, which the list filters by.
const (
	SessionRiskActive      = "active"        // the SSO session is live
	SessionRiskEnded       = "ended"         // it ended otherwise: logout, expiry, an administrator
	SessionRiskEndedByRisk = "ended-by-risk" // a session policy ended it (EndedBy)
)

// Status is the profile's status as read.
func (p *SessionRisk) Status() string {
	switch {
	case p.EndedBy != "":
		return SessionRiskEndedByRisk
	case p.Active:
		return SessionRiskActive
	}
	return SessionRiskEnded
}

const sessionRiskColumns = `session_id, realm_id, user_id, assessment_id, client_id, score, level, signals, present, places,
	ip_address, country, device_posture, posture_at, network_context, network_at, behavior, behavior_at, policy_id,
	policy_name, action, ended_by, step_up_owed, observations, started_at, updated_at`

// sessionRiskSelect reads a profile p with its user's name and whether
// its session s is live at $1.
var sessionRiskSelect = "SELECT " + prefixColumns("p", sessionRiskColumns) + `, u.username, s.id IS NOT NULL
	FROM session_risk p JOIN users u ON u.id = p.user_id
	LEFT JOIN user_sessions s ON s.id = p.session_id AND s.expires_at > $1`

func scanSessionRisk(row scanner) (*SessionRisk, error) {
	var p SessionRisk
	err := row.Scan(&p.SessionID, &p.RealmID, &p.UserID, &p.AssessmentID, &p.ClientID, &p.Score, &p.Level, &p.Signals,
		&p.Present, &p.Places, &p.IPAddress, &p.Country, &p.DevicePosture, &p.PostureAt, &p.NetworkContext, &p.NetworkAt,
		&p.Behavior, &p.BehaviorAt, &p.PolicyID, &p.PolicyName, &p.Action, &p.EndedBy, &p.StepUpOwed, &p.Observations,
		&p.StartedAt, &p.UpdatedAt, &p.Username, &p.Active)
	if err != nil {
		return nil, mapErr(err)
	}
	return &p, nil
}

func (p *SessionRisk) values() []any {
	return []any{p.SessionID, p.RealmID, p.UserID, p.AssessmentID, p.ClientID, p.Score, p.Level, p.Signals, p.Present,
		p.Places, p.IPAddress, p.Country, p.DevicePosture, p.PostureAt, p.NetworkContext, p.NetworkAt, p.Behavior,
		p.BehaviorAt, p.PolicyID, p.PolicyName, p.Action, p.EndedBy, p.StepUpOwed, p.Observations, p.StartedAt, p.UpdatedAt}
}

// StartSessionRisk writes the profile a sign-in gives its SSO session,
// replacing the one it had: a session signed in to again starts afresh.
func (s *Store) StartSessionRisk(ctx context.Context, p *SessionRisk) error {
	return s.Tx(ctx, func(tx *Store) error {
		if _, err := tx.w.ExecContext(ctx, "DELETE FROM session_risk WHERE session_id = $1", p.SessionID); err != nil {
			return fmt.Errorf("start session risk %s: %w", p.SessionID, mapErr(err))
		}
		_, err := tx.w.ExecContext(ctx, "INSERT INTO session_risk ("+sessionRiskColumns+") VALUES ("+placeholders(26)+")", p.values()...)
		if err != nil {
			return fmt.Errorf("start session risk %s: %w", p.SessionID, mapErr(err))
		}
		return nil
	})
}

// SaveSessionRisk writes p if the stored profile is still at version
// prev (its Observations when read), or inserts it when prev is negative:
// a compare-and-swap, so that of two observations that read the same
// version, the second finds ErrConflict, changes nothing and reads again.
// p.Observations is the new version.
func (s *Store) SaveSessionRisk(ctx context.Context, p *SessionRisk, prev int) error {
	if prev < 0 {
		_, err := s.w.ExecContext(ctx, "INSERT INTO session_risk ("+sessionRiskColumns+") VALUES ("+placeholders(26)+")", p.values()...)
		if err != nil {
			return fmt.Errorf("save session risk %s: %w", p.SessionID, mapErr(err))
		}
		return nil
	}
	res, err := s.w.ExecContext(ctx, `UPDATE session_risk SET assessment_id = $3, client_id = $4, score = $5, level = $6,
		signals = $7, present = $8, places = $9, ip_address = $10, country = $11, device_posture = $12, posture_at = $13,
		network_context = $14, network_at = $15, behavior = $16, behavior_at = $17, policy_id = $18, policy_name = $19,
		action = $20, ended_by = $21, step_up_owed = $22, observations = $23, updated_at = $24
		WHERE session_id = $1 AND realm_id = $2 AND observations = $25`,
		p.SessionID, p.RealmID, p.AssessmentID, p.ClientID, p.Score, p.Level, p.Signals, p.Present, p.Places, p.IPAddress,
		p.Country, p.DevicePosture, p.PostureAt, p.NetworkContext, p.NetworkAt, p.Behavior, p.BehaviorAt, p.PolicyID,
		p.PolicyName, p.Action, p.EndedBy, p.StepUpOwed, p.Observations, p.UpdatedAt, prev)
	n, err := rowsAffected(res, err, "save session risk "+p.SessionID)
	if err == nil && n == 0 {
		err = fmt.Errorf("session risk %s changed meanwhile: %w", p.SessionID, ErrConflict)
	}
	return err
}

// GetSessionRisk finds the profile of an SSO session of the realm, Active
// when the session is live at now.
func (s *Store) GetSessionRisk(ctx context.Context, realmID, sessionID string, now int64) (*SessionRisk, error) {
	p, err := scanSessionRisk(s.r.QueryRowContext(ctx, sessionRiskSelect+" WHERE p.session_id = $2 AND p.realm_id = $3",
		now, sessionID, realmID))
	if err != nil {
		return nil, fmt.Errorf("session risk %s: %w", sessionID, err)
	}
	return p, nil
}

// SessionRiskFilter selects a realm's profiles; zero fields select all.
type SessionRiskFilter struct {
	UserID   string
	Level    string
	Signal   string // present
	Status   string // SessionRiskActive, SessionRiskEnded, SessionRiskEndedByRisk
	From, To int64  // of the last change (updated_at), Unix milliseconds; To excluded
}

// where is the filter's condition; $1 is the read's time and $2 the realm.
func (f SessionRiskFilter) where(realmID string, now int64) (string, []any) {
	w := newWhere("p.realm_id = $2", now, realmID)
	if f.UserID != "" {
		w.add("p.user_id = $%d", f.UserID)
	}
	if f.Level != "" {
		w.add("p.level = $%d", f.Level)
	}
	if f.Signal != "" {
		w.add("p.present LIKE $%d", "%,"+f.Signal+",%")
	}
	switch f.Status {
	case SessionRiskActive:
		w.also("p.ended_by = '' AND s.id IS NOT NULL")
	case SessionRiskEnded:
		w.also("p.ended_by = '' AND s.id IS NULL")
	case SessionRiskEndedByRisk:
		w.also("p.ended_by <> ''")
	}
	if f.From > 0 {
		w.add("p.updated_at >= $%d", f.From)
	}
	if f.To > 0 {
		w.add("p.updated_at < $%d", f.To)
	}
	return w.clause()
}

// ListSessionRisks lists the realm's profiles that f selects, the latest
// changed first, from first, at most max.
func (s *Store) ListSessionRisks(ctx context.Context, realmID string, f SessionRiskFilter, now int64, first, max int) ([]*SessionRisk, error) {
	where, args := f.where(realmID, now)
	args = append(args, max, first)
	rows, err := s.r.QueryContext(ctx, sessionRiskSelect+where+
		fmt.Sprintf(" ORDER BY p.updated_at DESC, p.session_id DESC LIMIT $%d OFFSET $%d", len(args)-1, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("list session risks: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SessionRisk{}
	for rows.Next() {
		p, err := scanSessionRisk(rows)
		if err != nil {
			return nil, fmt.Errorf("list session risks: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list session risks: %w", mapErr(err))
	}
	return out, nil
}

// SessionRiskOutline is what the dashboard counts of a profile.
type SessionRiskOutline struct {
	Level, Present, Action, Status string
}

// EachSessionRiskOutline calls fn with the outline of each of the realm's
// profiles that f selects.
func (s *Store) EachSessionRiskOutline(ctx context.Context, realmID string, f SessionRiskFilter, now int64, fn func(SessionRiskOutline)) error {
	where, args := f.where(realmID, now)
	rows, err := s.r.QueryContext(ctx, `SELECT p.level, p.present, p.action, p.ended_by, s.id IS NOT NULL
		FROM session_risk p LEFT JOIN user_sessions s ON s.id = p.session_id AND s.expires_at > $1`+where, args...)
	if err != nil {
		return fmt.Errorf("session risk dashboard: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var p SessionRisk
		var o SessionRiskOutline
		if err := rows.Scan(&o.Level, &o.Present, &o.Action, &p.EndedBy, &p.Active); err != nil {
			return fmt.Errorf("session risk dashboard: %w", mapErr(err))
		}
		o.Status = p.Status()
		fn(o)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("session risk dashboard: %w", mapErr(err))
	}
	return nil
}

// SessionStepUpOwed finds the user's latest profile whose session a
// policy ended asking a step-up the user has not yet given; ErrNotFound
// for none.
func (s *Store) SessionStepUpOwed(ctx context.Context, realmID, userID string, now int64) (*SessionRisk, error) {
	p, err := scanSessionRisk(s.r.QueryRowContext(ctx, sessionRiskSelect+` WHERE p.user_id = $2 AND p.step_up_owed = TRUE
		AND p.realm_id = $3 ORDER BY p.updated_at DESC LIMIT 1`, now, userID, realmID))
	if err != nil {
		return nil, fmt.Errorf("step-up owed by user %s: %w", userID, err)
	}
	return p, nil
}

// ClearSessionStepUp records that the user gave the step-up their
// sessions' policies asked: a sign-in proved a second factor.
func (s *Store) ClearSessionStepUp(ctx context.Context, realmID, userID string) error {
	_, err := s.w.ExecContext(ctx, "UPDATE session_risk SET step_up_owed = FALSE WHERE user_id = $1 AND step_up_owed = TRUE AND realm_id = $2",
		userID, realmID)
	if err != nil {
		return fmt.Errorf("clear the step-up of user %s: %w", userID, mapErr(err))
	}
	return nil
}

// RefuseSessionTokens keeps the hashes of the live refresh tokens of the
// SSO session ssoID's client sessions, with the action that is about to
// end it, until each token would have expired: a refresh with one is then
// told why it is refused. It runs before the session ends, in the same
// transaction.
func (s *Store) RefuseSessionTokens(ctx context.Context, realmID, ssoID, action string, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO risk_refused_tokens (token_hash, realm_id, session_id, action, expires_at)
		SELECT t.token_hash, t.realm_id, $2, $3, t.expires_at FROM refresh_tokens t JOIN user_sessions c ON c.id = t.session_id
		WHERE c.parent_id = $2 AND c.realm_id = $1 AND t.rotated_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > $4
		ON CONFLICT (token_hash) DO NOTHING`, realmID, ssoID, action, now)
	return rowsAffected(res, err, "refuse the refresh tokens of session "+ssoID)
}

// RefusedToken answers the action that ended the session of the refresh
// token with this hash; ErrNotFound when no session policy did.
func (s *Store) RefusedToken(ctx context.Context, realmID string, hash []byte) (string, error) {
	var action string
	err := s.r.QueryRowContext(ctx, "SELECT action FROM risk_refused_tokens WHERE token_hash = $1 AND realm_id = $2",
		hash, realmID).Scan(&action)
	if err != nil {
		return "", fmt.Errorf("refused refresh token: %w", mapErr(err))
	}
	return action, nil
}

// DeleteExpiredTokenRefusals forgets the refused tokens that expired by
// now, and counts them.
func (s *Store) DeleteExpiredTokenRefusals(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM risk_refused_tokens WHERE expires_at <= $1", now)
	return rowsAffected(res, err, "delete expired token refusals")
}

// DeleteStaleSessionRisks deletes the profiles unchanged since before,
// and the events made before it, and counts both.
func (s *Store) DeleteStaleSessionRisks(ctx context.Context, before int64) (int64, error) {
	var n int64
	err := s.Tx(ctx, func(tx *Store) error {
		res, err := tx.w.ExecContext(ctx, "DELETE FROM session_risk WHERE updated_at < $1", before)
		profiles, err := rowsAffected(res, err, "delete stale session risks")
		if err != nil {
			return err
		}
		res, err = tx.w.ExecContext(ctx, "DELETE FROM session_risk_events WHERE created_at < $1", before)
		events, err := rowsAffected(res, err, "delete stale session risk events")
		n = profiles + events
		return err
	})
	return n, err
}

// SessionRiskEvent is one observation of a session: a sign-in, a refresh
// from another address, a report of the client SDK, an evaluation. Detail
// is the module's JSON; Present the signals it found present; Score,
// Level, Action and the policy are the session's after it.
type SessionRiskEvent struct {
	ID         string
	RealmID    string
	SessionID  string
	UserID     string
	Kind       string
	ClientID   string
	IPAddress  string
	Detail     string
	Present    string
	Score      int
	Level      string
	Action     string
	PolicyID   string
	PolicyName string
	CreatedAt  int64
}

const sessionRiskEventColumns = `id, realm_id, session_id, user_id, kind, client_id, ip_address, detail, present, score, level,
	action, policy_id, policy_name, created_at`

func scanSessionRiskEvent(row scanner) (*SessionRiskEvent, error) {
	var e SessionRiskEvent
	err := row.Scan(&e.ID, &e.RealmID, &e.SessionID, &e.UserID, &e.Kind, &e.ClientID, &e.IPAddress, &e.Detail, &e.Present,
		&e.Score, &e.Level, &e.Action, &e.PolicyID, &e.PolicyName, &e.CreatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	return &e, nil
}

// AddSessionRiskEvent stores an event.
func (s *Store) AddSessionRiskEvent(ctx context.Context, e *SessionRiskEvent) error {
	_, err := s.w.ExecContext(ctx, "INSERT INTO session_risk_events ("+sessionRiskEventColumns+") VALUES ("+placeholders(15)+")",
		e.ID, e.RealmID, e.SessionID, e.UserID, e.Kind, e.ClientID, e.IPAddress, e.Detail, e.Present, e.Score, e.Level,
		e.Action, e.PolicyID, e.PolicyName, e.CreatedAt)
	if err != nil {
		return fmt.Errorf("add session risk event: %w", mapErr(err))
	}
	return nil
}

// GetSessionRiskEvent finds an event of the realm.
func (s *Store) GetSessionRiskEvent(ctx context.Context, realmID, id string) (*SessionRiskEvent, error) {
	e, err := scanSessionRiskEvent(s.r.QueryRowContext(ctx, "SELECT "+sessionRiskEventColumns+
		" FROM session_risk_events WHERE realm_id = $1 AND id = $2", realmID, id))
	if err != nil {
		return nil, fmt.Errorf("session risk event %s: %w", id, err)
	}
	return e, nil
}

// SessionRiskEventFilter selects a realm's events; zero fields select all.
type SessionRiskEventFilter struct {
	SessionID string
	UserID    string
	Kind      string
	Signal    string // found present
	From, To  int64  // Unix milliseconds; To excluded
}

func (f SessionRiskEventFilter) where(realmID string) (string, []any) {
	w := newWhere("realm_id = $1", realmID)
	if f.SessionID != "" {
		w.add("session_id = $%d", f.SessionID)
	}
	if f.UserID != "" {
		w.add("user_id = $%d", f.UserID)
	}
	if f.Kind != "" {
		w.add("kind = $%d", f.Kind)
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

// ListSessionRiskEvents lists the realm's events that f selects, newest
// first, from first, at most max.
func (s *Store) ListSessionRiskEvents(ctx context.Context, realmID string, f SessionRiskEventFilter, first, max int) ([]*SessionRiskEvent, error) {
	where, args := f.where(realmID)
	args = append(args, max, first)
	rows, err := s.r.QueryContext(ctx, "SELECT "+sessionRiskEventColumns+" FROM session_risk_events"+where+
		fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d", len(args)-1, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("list session risk events: %w", mapErr(err))
	}
	defer rows.Close()
	out := []*SessionRiskEvent{}
	for rows.Next() {
		e, err := scanSessionRiskEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("list session risk events: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list session risk events: %w", mapErr(err))
	}
	return out, nil
}

// EachSessionRiskEventOutline calls fn with the kind, the signals found
// present, the session and the user of each of the realm's events that f
// selects: the dashboards' counts.
func (s *Store) EachSessionRiskEventOutline(ctx context.Context, realmID string, f SessionRiskEventFilter,
	fn func(kind, present, sessionID, userID string, at int64)) error {
	where, args := f.where(realmID)
	rows, err := s.r.QueryContext(ctx, "SELECT kind, present, session_id, user_id, created_at FROM session_risk_events"+where, args...)
	if err != nil {
		return fmt.Errorf("session risk events: %w", mapErr(err))
	}
	defer rows.Close()
	for rows.Next() {
		var kind, present, session, user string
		var at int64
		if err := rows.Scan(&kind, &present, &session, &user, &at); err != nil {
			return fmt.Errorf("session risk events: %w", mapErr(err))
		}
		fn(kind, present, session, user, at)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("session risk events: %w", mapErr(err))
	}
	return nil
}

// RiskBaseline is a user's baseline of behaviour; Metrics is the
// module's JSON.
type RiskBaseline struct {
	UserID    string
	RealmID   string
	Metrics   string
	Revision  int64 // SaveRiskBaseline swaps on it
	UpdatedAt int64
}

// GetRiskBaseline finds the user's baseline; ErrNotFound before the
// first samples.
func (s *Store) GetRiskBaseline(ctx context.Context, realmID, userID string) (*RiskBaseline, error) {
	var b RiskBaseline
	err := s.r.QueryRowContext(ctx, `SELECT user_id, realm_id, metrics, revision, updated_at FROM risk_baselines
		WHERE user_id = $1 AND realm_id = $2`, userID, realmID).Scan(&b.UserID, &b.RealmID, &b.Metrics, &b.Revision, &b.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("risk baseline of user %s: %w", userID, mapErr(err))
	}
	return &b, nil
}

// SaveRiskBaseline writes b if the stored baseline is still at revision
// prev, or inserts it when prev is negative; a baseline changed meanwhile
// is ErrConflict. b.Revision is the new revision.
func (s *Store) SaveRiskBaseline(ctx context.Context, b *RiskBaseline, prev int64) error {
	if prev < 0 {
		_, err := s.w.ExecContext(ctx, `INSERT INTO risk_baselines (user_id, realm_id, metrics, revision, updated_at)
			VALUES ($1, $2, $3, $4, $5)`, b.UserID, b.RealmID, b.Metrics, b.Revision, b.UpdatedAt)
		if err != nil {
			return fmt.Errorf("save risk baseline of user %s: %w", b.UserID, mapErr(err))
		}
		return nil
	}
	res, err := s.w.ExecContext(ctx, `UPDATE risk_baselines SET metrics = $3, revision = $4, updated_at = $5
		WHERE user_id = $1 AND realm_id = $2 AND revision = $6`, b.UserID, b.RealmID, b.Metrics, b.Revision, b.UpdatedAt, prev)
	n, err := rowsAffected(res, err, "save risk baseline of user "+b.UserID)
	if err == nil && n == 0 {
		err = fmt.Errorf("risk baseline of user %s changed meanwhile: %w", b.UserID, ErrConflict)
	}
	return err
}
