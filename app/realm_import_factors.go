package app

import (
	"context"

	"github.com/idenplane/idenplane/store"
)

// replace writes the plan in place of the realm existing (nil for none).
// Second factors are never exported (their secrets would let a file's
// holder make codes), so the users an import keeps by ID keep their TOTP
// credentials and recovery codes across the replacement, as they keep
// their passwords: otherwise an overwrite would silently turn every
// user's second factor off.
func (p *importPlan) replace(ctx context.Context, tx *store.Store, existing *store.Realm) error {
	if existing == nil {
		return p.write(ctx, tx)
	}
	factors, err := tx.SnapshotFactors(ctx, existing.ID)
	if err != nil {
		return err
	}
	if err := tx.DeleteRealm(ctx, existing.Name); err != nil {
		return err
	}
	if err := p.write(ctx, tx); err != nil {
		return err
	}
	return tx.RestoreFactors(ctx, p.realm.ID, factors)
}
