package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
)

// SignInFlow is one sign-in in progress, whatever asked for it. The store
// keeps what app/signin gives it; only Step has a meaning here: the number
// of changes made so far, which AdvanceSignInFlow checks and moves on.
type SignInFlow struct {
	ID      string
	RealmID string
	// Requester is the kind of what asked for the sign-in (oidc, saml,
	// device, ...), RequesterID its own identifier there.
	Requester   string
	RequesterID string
	// DefinitionID is the authentication flow it follows.
	DefinitionID string
	// Wants is what the requester asks of the sign-in, as app/signin
	// encodes it (JSON).
	Wants  []byte
	UserID string // '' until a step has told who signs in
	AMR    []string
	Passed []int // the indexes of the definition's steps passed
	Step   int64
	// BrowserHash binds the flow to the browser that started it: the
	// SHA-256 of its CSRF cookie.
	BrowserHash []byte
	CreatedAt   int64 // Unix milliseconds
	ExpiresAt   int64
}

const signInFlowColumns = `id, realm_id, requester, requester_id, definition_id, wants, user_id, amr, passed, step_no,
	browser_hash, created_at, expires_at`

func scanSignInFlow(row scanner) (*SignInFlow, error) {
	var f SignInFlow
	var wants, amr, passed string
	var user sql.NullString
	err := row.Scan(&f.ID, &f.RealmID, &f.Requester, &f.RequesterID, &f.DefinitionID, &wants, &user, &amr, &passed,
		&f.Step, &f.BrowserHash, &f.CreatedAt, &f.ExpiresAt)
	if err != nil {
		return nil, mapErr(err)
	}
	f.UserID, f.Wants = user.String, []byte(wants)
	if err := json.Unmarshal([]byte(amr), &f.AMR); err != nil {
		return nil, fmt.Errorf("decode amr of sign-in flow %s: %w", f.ID, err)
	}
	if err := json.Unmarshal([]byte(passed), &f.Passed); err != nil {
		return nil, fmt.Errorf("decode passed steps of sign-in flow %s: %w", f.ID, err)
	}
	return &f, nil
}

func signInFlowJSON(f *SignInFlow) (wants, passed string, err error) {
	if f.Wants == nil {
		f.Wants = []byte("{}")
	}
	if !json.Valid(f.Wants) {
		return "", "", fmt.Errorf("sign-in flow %s: what it wants is not JSON", f.ID)
	}
	if f.Passed == nil {
		f.Passed = []int{}
	}
	b, err := json.Marshal(f.Passed)
	return string(f.Wants), string(b), err
}

// CreateSignInFlow stores a new flow at step 0. Its user, when set, must be
// of its realm; otherwise ErrNotFound.
func (s *Store) CreateSignInFlow(ctx context.Context, f *SignInFlow) error {
	if len(f.BrowserHash) != sha256.Size {
		return fmt.Errorf("sign-in flow %s: the browser hash must be %d bytes", f.ID, sha256.Size)
	}
	wants, passed, err := signInFlowJSON(f)
	if err != nil {
		return err
	}
	f.Step = 0
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.userOfRealm(ctx, f.RealmID, f.UserID); err != nil {
			return err
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO signin_flows (`+signInFlowColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $10, $11, $12)`,
			f.ID, f.RealmID, f.Requester, f.RequesterID, f.DefinitionID, wants, nullString(f.UserID), jsonList(f.AMR),
			passed, f.BrowserHash, f.CreatedAt, f.ExpiresAt)
		if err != nil {
			return fmt.Errorf("create sign-in flow %s: %w", f.ID, mapErr(err))
		}
		return nil
	})
}

// userOfRealm answers ErrNotFound unless id is "" or a user of the realm.
func (s *Store) userOfRealm(ctx context.Context, realmID, id string) error {
	if id == "" {
		return nil
	}
	var n int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = $1 AND realm_id = $2`, id, realmID).Scan(&n); err != nil {
		return fmt.Errorf("user %s: %w", id, mapErr(err))
	}
	if n == 0 {
		return fmt.Errorf("user %s of realm %s: %w", id, realmID, ErrNotFound)
	}
	return nil
}

// GetSignInFlow is a flow of the realm unexpired at now.
func (s *Store) GetSignInFlow(ctx context.Context, realmID, id string, now int64) (*SignInFlow, error) {
	f, err := scanSignInFlow(s.r.QueryRowContext(ctx, `SELECT `+signInFlowColumns+` FROM signin_flows
		WHERE id = $1 AND realm_id = $2 AND expires_at > $3`, id, realmID, now))
	if err != nil {
		return nil, fmt.Errorf("sign-in flow %s: %w", id, err)
	}
	return f, nil
}

// signInFlowOfSQL searches the index signin_flows_requester
// (plans_test.go).
const signInFlowOfSQL = `SELECT ` + signInFlowColumns + ` FROM signin_flows
	WHERE realm_id = $1 AND requester = $2 AND requester_id = $3 AND expires_at > $4
	ORDER BY created_at DESC, id DESC LIMIT 1`

// SignInFlowOf is the newest flow of the realm, unexpired at now, that a
// requester started for its own requesterID: how a sign-in that left for
// another site (an identity provider's) finds its flow again.
func (s *Store) SignInFlowOf(ctx context.Context, realmID, requester, requesterID string, now int64) (*SignInFlow, error) {
	f, err := scanSignInFlow(s.r.QueryRowContext(ctx, signInFlowOfSQL, realmID, requester, requesterID, now))
	if err != nil {
		return nil, fmt.Errorf("sign-in flow of %s %s: %w", requester, requesterID, err)
	}
	return f, nil
}

// AdvanceSignInFlow writes f's user, AMR, passed steps and wants (a step's
// form may add to them: the remember-me box) over the stored
// flow's if the stored flow is still at step f.Step, and moves it and f to
// the next step: a compare-and-swap, so that of two requests that read the
// same step, the second finds ErrConflict and changes nothing. A flow gone
// or expired at now is ErrNotFound.
func (s *Store) AdvanceSignInFlow(ctx context.Context, f *SignInFlow, now int64) error {
	wants, passed, err := signInFlowJSON(f)
	if err != nil {
		return err
	}
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.userOfRealm(ctx, f.RealmID, f.UserID); err != nil {
			return err
		}
		res, err := tx.w.ExecContext(ctx, `UPDATE signin_flows SET user_id = $1, amr = $2, passed = $3, wants = $4,
			step_no = step_no + 1 WHERE id = $5 AND realm_id = $6 AND step_no = $7 AND expires_at > $8`,
			nullString(f.UserID), jsonList(f.AMR), passed, wants, f.ID, f.RealmID, f.Step, now)
		if err != nil {
			return fmt.Errorf("advance sign-in flow %s: %w", f.ID, mapErr(err))
		}
		if n, err := res.RowsAffected(); err != nil {
			return mapErr(err)
		} else if n == 1 {
			f.Step++
			return nil
		}
		var n int
		if err := tx.w.QueryRowContext(ctx, `SELECT count(*) FROM signin_flows WHERE id = $1 AND realm_id = $2
			AND expires_at > $3`, f.ID, f.RealmID, now).Scan(&n); err != nil {
			return fmt.Errorf("sign-in flow %s: %w", f.ID, mapErr(err))
		}
		if n == 0 {
			return fmt.Errorf("sign-in flow %s: %w", f.ID, ErrNotFound)
		}
		return fmt.Errorf("sign-in flow %s moved on from step %d: %w", f.ID, f.Step, ErrConflict)
	})
}

// DeleteSignInFlow ends a flow of the realm: finished, failed or
// abandoned.
func (s *Store) DeleteSignInFlow(ctx context.Context, realmID, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM signin_flows WHERE id = $1 AND realm_id = $2`, id, realmID)
	if err != nil {
		return fmt.Errorf("delete sign-in flow %s: %w", id, mapErr(err))
	}
	return affectedOne(res, "sign-in flow "+id)
}

// DeleteExpiredSignInFlows removes the flows of every realm that expired
// by now and counts them.
func (s *Store) DeleteExpiredSignInFlows(ctx context.Context, now int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, "DELETE FROM signin_flows WHERE expires_at <= $1", now)
	return rowsAffected(res, err, "delete expired sign-in flows")
}
