package ldapfed

import (
	"context"
	"errors"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// pageEntry is an entry of a page as the sync keeps it until the page is
// written: read as a user (or why it cannot be one), with the DNs of its
// groups when memberOf names them. Not the library's entry, which holds
// each value twice, once in a buffer of 512 bytes or more.
type pageEntry struct {
	eu       entryUser // its DN even when err says it cannot be a user
	err      error
	memberOf []string // normalized; nil unless groups are mapped by memberOf
}

func (run *syncRun) pageEntry(e *ldap.Entry) pageEntry {
	eu, err := run.set.readEntry(e)
	return pageEntry{eu: eu, err: err, memberOf: run.set.memberOfDNs(e)}
}

// pageUsers are what a page's entries are compared with, read in its
// transaction: the users linked to them by external ID, and with groups
// mapped, the IDs of the groups each of those users is in.
type pageUsers struct {
	linked      map[string]store.LinkedUser
	memberships map[string][]string
}

// writePage writes the users of a page of entries in one transaction:
// the page was read before it began, so no directory round trip happens
// inside it. The users the page is compared with are read inside it, as
// they are when they are written, on the connection that writes them:
// the readers' page caches are left to the requests served meanwhile.
func (run *syncRun) writePage(ctx context.Context, entries []pageEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var created, updated int
	var failures []Failure
	err := run.s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		created, updated, failures, run.ended = 0, 0, nil, nil
		users, err := run.pageUsers(ctx, tx, entries)
		if err != nil {
			return err
		}
		for _, pe := range entries {
			ok, err := run.writeEntry(ctx, tx, pe, users)
			var ae *apperr.Error
			switch {
			case errors.As(err, &ae) && ae.Status < 500:
				failures = append(failures, Failure{DN: pe.eu.DN, Reason: ae.Message})
			case err != nil:
				return err
			case ok == entryCreated:
				created++
			case ok == entryUpdated:
				updated++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	run.s.sessionsEnded(ctx, run.realm, run.ended)
	run.res.Read += len(entries)
	run.res.Created += created
	run.res.Updated += updated
	for _, f := range failures {
		run.res.fail(f.DN, f.Reason)
	}
	before := run.prog.processed.Load()
	after := run.prog.processed.Add(int64(len(entries)))
	if before/progressEvery != after/progressEvery {
		run.s.deps.Log.Info("user federation sync progress", "realm", run.realm.Name, "provider", run.p.Name,
			"processed", after, "created", run.res.Created, "updated", run.res.Updated, "failed", run.res.Failed)
	}
	return nil
}

// pageUsers reads the users linked to a page's entries, and with groups
// mapped their memberships: a query or two a page, so that memory follows
// the page's size, not the directory's. A first import reads none: a user
// a sign-in imports meanwhile is a conflict of the entry, as it was
// before the lookups were per page.
func (run *syncRun) pageUsers(ctx context.Context, tx *store.Store, entries []pageEntry) (*pageUsers, error) {
	if run.first {
		return &pageUsers{}, nil
	}
	ids := make([]string, 0, len(entries))
	for _, pe := range entries {
		if pe.err == nil {
			ids = append(ids, pe.eu.ExternalID)
		}
	}
	linked, err := tx.FederationLinkedUsers(ctx, run.realm.ID, run.p.ID, ids)
	if err != nil {
		return nil, err
	}
	users := &pageUsers{linked: linked}
	if run.groups == nil || len(linked) == 0 {
		return users, nil
	}
	userIDs := make([]string, 0, len(linked))
	for _, lu := range linked {
		userIDs = append(userIDs, lu.User.ID)
	}
	groups, err := tx.UsersGroups(ctx, userIDs)
	if err != nil {
		return nil, err
	}
	users.memberships = make(map[string][]string, len(groups))
	for userID, gs := range groups {
		for _, g := range gs {
			users.memberships[userID] = append(users.memberships[userID], g.ID)
		}
	}
	return users, nil
}

type entryOutcome int

const (
	entryUnchanged entryOutcome = iota
	entryCreated
	entryUpdated
)

// writeEntry creates or refreshes the user of one entry on tx. A refusal
// (an entry that cannot be a user, a name a local user holds) is an
// *apperr.Error under 500, a failure of the entry alone.
func (run *syncRun) writeEntry(ctx context.Context, tx *store.Store, pe pageEntry, users *pageUsers) (entryOutcome, error) {
	if pe.err != nil {
		return entryUnchanged, apperr.Invalid("%v", pe.err)
	}
	eu := pe.eu
	if !run.seen.add(eu.ExternalID) {
		return entryUnchanged, apperr.Invalid("another entry has the same %s", run.set.UUIDLDAPAttr)
	}
	lu, linked := users.linked[eu.ExternalID]
	if !linked {
		u, err := run.s.createLinked(ctx, tx, run.realm, run.p, eu)
		if err != nil {
			run.seen.remove(eu.ExternalID)
			return entryUnchanged, err
		}
		_, err = run.setGroups(ctx, tx, u.ID, pe, nil)
		return entryCreated, err
	}
	// Most entries have not changed: compared with the user read with the
	// page, they cost no query.
	link := lu.Link
	_, changed, err := profileOf(lu.User, eu, run.set)
	if err != nil {
		return entryUnchanged, apperr.Invalid("%v", err)
	}
	if changed || link.DN != eu.DN {
		var ended []*store.Session
		if changed, ended, err = run.s.refreshUser(ctx, tx, run.realm, lu.User, link, eu, run.set); err != nil {
			return entryUnchanged, err
		}
		run.ended = append(run.ended, ended...)
	}
	groupsChanged, err := run.setGroups(ctx, tx, link.UserID, pe, users.memberships[link.UserID])
	if err != nil || !(changed || groupsChanged) {
		return entryUnchanged, err
	}
	return entryUpdated, nil
}

// setGroups keeps the memberships of an entry's user in step with its
// groups, when groups are mapped; current are the IDs of the groups the
// user is in.
func (run *syncRun) setGroups(ctx context.Context, tx *store.Store, userID string, pe pageEntry, current []string) (bool, error) {
	if run.groups == nil {
		return false, nil
	}
	wanted := run.groups.of(normDN(pe.eu.DN), pe.memberOf, run.set.NestedGroups)
	return run.realmGroups.setMemberships(ctx, tx, userID, wanted, current,
		func(name string) bool { return run.groups.byName[name] })
}
