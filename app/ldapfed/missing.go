package ldapfed

import (
	"context"
	"errors"

	"github.com/idenplane/idenplane/store"
)

// removeMissing disables, or deletes, the linked users whose entry the
// full sync did not meet, through the identity core. The provider's links
// are read a page at a time in the order of their external IDs, so that
// a large provider's are never all in memory.
func (run *syncRun) removeMissing(ctx context.Context) error {
	after := ""
	for {
		links, err := run.s.deps.Store.FederationLinksAfter(ctx, run.realm.ID, run.p.ID, after, run.set.Pagination)
		if err != nil {
			return err
		}
		if len(links) == 0 {
			return nil
		}
		after = links[len(links)-1].ExternalID
		var missing []*store.FederationLink
		for _, l := range links {
			if !run.seen.has(l.ExternalID) {
				missing = append(missing, l)
			}
		}
		if err := run.removeLinked(ctx, missing); err != nil {
			return err
		}
		if len(links) < run.set.Pagination {
			return nil
		}
	}
}

// removeLinked disables, or deletes, the users of links in one
// transaction. A user made after the sync began is left alone: a sign-in
// imported it meanwhile, from an entry the search may have passed before
// it existed.
func (run *syncRun) removeLinked(ctx context.Context, links []*store.FederationLink) error {
	if len(links) == 0 {
		return nil
	}
	var disabled, deleted int
	err := run.s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		disabled, deleted, run.ended = 0, 0, nil
		for _, l := range links {
			u, err := tx.GetUser(ctx, run.realm.ID, l.UserID)
			if errors.Is(err, store.ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			if u.CreatedAt > run.start {
				continue
			}
			if run.set.MissingUsers == MissingDelete {
				if err := run.s.deps.Identity().DeleteUser(ctx, tx, run.realm, u); err != nil {
					return err
				}
				deleted++
				continue
			}
			if !u.Enabled {
				continue
			}
			u.Enabled = false
			ended, err := run.s.deps.Identity().UpdateLinkedUser(ctx, tx, u)
			if err != nil {
				return err
			}
			run.ended = append(run.ended, ended...)
			disabled++
		}
		return nil
	})
	if err != nil {
		return err
	}
	run.s.sessionsEnded(ctx, run.realm, run.ended)
	run.res.Disabled += disabled
	run.res.Deleted += deleted
	return nil
}
