package store

import (
	"context"
	"fmt"
)

// SetupWizard is the record of the first-run setup wizard (app/setup):
// one row at most. The store keeps Steps as the wizard wrote it.
type SetupWizard struct {
	Status string // pending, completed or skipped
	// TokenHash is the SHA-256 of the bootstrap token; nil once the
	// wizard is over, when no token opens it any more.
	TokenHash []byte
	Steps     string // JSON: what each step saved, never a secret
	// Revision orders writes: an update names the revision it read, and
	// fails with ErrConflict when another write came first.
	Revision   int64
	CreatedAt  int64
	UpdatedAt  int64
	FinishedAt int64  // 0 while pending
	FinishedBy string // "" while pending
}

const setupWizardColumns = `status, token_hash, steps, revision, created_at, updated_at, finished_at, finished_by`

// GetSetupWizard answers the wizard's record, or ErrNotFound before a
// start has made one.
func (s *Store) GetSetupWizard(ctx context.Context) (*SetupWizard, error) {
	var w SetupWizard
	err := s.w.QueryRowContext(ctx, "SELECT "+setupWizardColumns+" FROM setup_wizard WHERE id = 1").Scan(
		&w.Status, &w.TokenHash, &w.Steps, &w.Revision, &w.CreatedAt, &w.UpdatedAt, &w.FinishedAt, &w.FinishedBy)
	if err != nil {
		return nil, fmt.Errorf("setup wizard: %w", mapErr(err))
	}
	return &w, nil
}

// CreateSetupWizard stores the wizard's first record, at revision 1. When
// one exists already (another server of a fleet made it first) the error
// is ErrConflict, and nothing changes.
func (s *Store) CreateSetupWizard(ctx context.Context, w *SetupWizard) error {
	w.Revision = 1
	_, err := s.w.ExecContext(ctx, "INSERT INTO setup_wizard (id, "+setupWizardColumns+") VALUES (1, "+placeholders(8)+")",
		w.Status, w.TokenHash, w.Steps, w.Revision, w.CreatedAt, w.UpdatedAt, w.FinishedAt, w.FinishedBy)
	if err != nil {
		return fmt.Errorf("create setup wizard: %w", mapErr(err))
	}
	return nil
}

// UpdateSetupWizard writes w over the record if it is still at
// w.Revision, and moves w to the next revision; a record another write
// changed since is ErrConflict, and one never made ErrNotFound.
func (s *Store) UpdateSetupWizard(ctx context.Context, w *SetupWizard) error {
	res, err := s.w.ExecContext(ctx, `UPDATE setup_wizard SET status = $1, token_hash = $2, steps = $3, revision = $4,
		updated_at = $5, finished_at = $6, finished_by = $7 WHERE id = 1 AND revision = $8`,
		w.Status, w.TokenHash, w.Steps, w.Revision+1, w.UpdatedAt, w.FinishedAt, w.FinishedBy, w.Revision)
	if err != nil {
		return fmt.Errorf("update setup wizard: %w", mapErr(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update setup wizard: %w", err)
	} else if n == 0 {
		if _, err := s.GetSetupWizard(ctx); err != nil {
			return err
		}
		return fmt.Errorf("update setup wizard at revision %d: %w", w.Revision, ErrConflict)
	}
	w.Revision++
	return nil
}
