package ldapfed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/bus"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Sync actions.
const (
	ActionFull    = "full"    // every entry; linked users whose entry is gone are disabled or deleted
	ActionChanged = "changed" // the entries changed since the last sync
)

// progressEvery is how many entries a sync reads between two progress
// lines in the log.
const progressEvery = 10000

// ErrSyncRunning: the provider's sync is running already.
var ErrSyncRunning = errors.New("a sync of this provider is running")

// Sync runs a sync of the provider now (query action=full|changed,
// default full) and answers its result, even to a caller that went away. A directory that fails stops the
// sync: a 503 saying why, and the result recorded with the error.
func (s *Service) Sync(w http.ResponseWriter, r *http.Request) error {
	action := r.URL.Query().Get("action")
	if action == "" {
		action = ActionFull
	}
	if action != ActionFull && action != ActionChanged {
		return apperr.Parameter("action", "must be full or changed")
	}
	realm, p, err := s.provider(r)
	if err != nil {
		return err
	}
	set, err := settingsOf(p)
	if err != nil {
		return err
	}
	switch {
	case !p.Enabled:
		return apperr.Invalid("user federation provider %s is disabled", p.Name)
	case !set.ImportEnabled:
		return apperr.Invalid("user federation provider %s does not import users (importEnabled is false)", p.Name)
	case p.BindCredential == "":
		return apperr.Field("bindCredential", "is not set: the provider cannot bind")
	}
	// A caller that stops waiting does not stop the sync: it runs to its
	// end (every step under the directory's timeouts) and is recorded.
	res, err := s.RunSync(context.WithoutCancel(r.Context()), realm, p, action)
	var de *DirectoryError
	switch {
	case errors.Is(err, ErrSyncRunning):
		return apperr.Conflict("", "a sync of user federation provider %s is running; try again when it ends", p.Name)
	case errors.As(err, &de):
		return &apperr.Error{Status: http.StatusServiceUnavailable, Code: apperr.CodeUnavailable,
			Message: fmt.Sprintf("the sync stopped: the directory failed (%s): %s", de.Kind, de.Detail), Cause: err}
	case err != nil:
		return err
	}
	return httpx.OK(w, res)
}

// RunSync syncs one provider of realm: one sync at a time per provider,
// whoever asks (ErrSyncRunning otherwise). Its result is recorded with
// the provider, an error included; a sync that ran through moves the
// start of the next changed-user sync to its own start.
func (s *Service) RunSync(ctx context.Context, realm *store.Realm, p *store.FederationProvider, action string) (*SyncResult, error) {
	set, err := settingsOf(p)
	if err != nil {
		return nil, err
	}
	start := s.deps.Now()
	prog := &progress{action: action, startedAt: start.UnixMilli()}
	s.mu.Lock()
	if s.running[p.ID] != nil {
		s.mu.Unlock()
		return nil, ErrSyncRunning
	}
	s.running[p.ID] = prog
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, p.ID)
		s.mu.Unlock()
	}()

	res := &SyncResult{Action: action, StartedAt: start.UnixMilli(), Failures: []Failure{}}
	run := syncRun{s: s, realm: realm, p: p, set: set, res: res, prog: prog}
	err = run.sync(ctx, action)
	res.DurationMs = time.Since(start).Milliseconds()
	var next int64
	if err == nil {
		next = start.UnixMilli()
	} else {
		res.Error = err.Error()
		var de *DirectoryError
		if errors.As(err, &de) {
			res.Error = de.Kind + ": " + de.Detail
		}
	}
	s.deps.Log.Info("user federation sync", "realm", realm.Name, "provider", p.Name, "action", action, "created", res.Created,
		"updated", res.Updated, "disabled", res.Disabled, "deleted", res.Deleted, "failed", res.Failed,
		"duration_ms", res.DurationMs, "error", res.Error)
	if recordErr := s.record(context.WithoutCancel(ctx), realm, p, res, next); recordErr != nil && err == nil {
		err = recordErr
	}
	return res, err
}

// record keeps a sync's result with its provider and publishes it
// (ldap.sync.finished), together.
func (s *Service) record(ctx context.Context, realm *store.Realm, p *store.FederationProvider, res *SyncResult, next int64) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	var pending bus.Pending
	err = s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.SetFederationSync(ctx, p.RealmID, p.ID, string(b), next); err != nil {
			return err
		}
		pending, err = s.deps.Bus.Queue(ctx, tx, realm, bus.LDAPSyncFinished, SyncFinished{ProviderID: p.ID, Provider: p.Name, SyncResult: res})
		return err
	})
	if err != nil {
		return err
	}
	pending.Wake()
	return nil
}

// SyncFinished is ldap.sync.finished's data: the provider and the sync's
// result, as the provider's status shows it.
type SyncFinished struct {
	ProviderID string `json:"providerId"`
	Provider   string `json:"provider"`
	*SyncResult
}

// syncRun is one sync's state.
type syncRun struct {
	s     *Service
	realm *store.Realm
	p     *store.FederationProvider
	set   *Settings
	res   *SyncResult
	prog  *progress
	links map[string]*store.FederationLink // by external ID
	users map[string]*store.User           // the linked users as the sync began, by ID
	seen  map[string]bool                  // external IDs met in the directory
	// With group mapping: the directory's groups, the realm's, and the
	// realm's memberships (user ID → group IDs).
	groups      *directoryGroups
	realmGroups *realmGroups
	memberships map[string][]string
	// ended holds the sessions the transaction under way ended, passed on
	// once it commits.
	ended []*store.Session
}

func (run *syncRun) sync(ctx context.Context, action string) error {
	links, err := run.s.deps.Store.FederationLinks(ctx, run.realm.ID, run.p.ID)
	if err != nil {
		return err
	}
	run.links = make(map[string]*store.FederationLink, len(links))
	for _, l := range links {
		run.links[l.ExternalID] = l
	}
	run.seen = make(map[string]bool, len(links))
	if run.users, err = run.s.deps.Store.FederationUsers(ctx, run.realm.ID, run.p.ID); err != nil {
		return err
	}
	return withConn(ctx, run.set, func(c *ldap.Conn) error { return run.syncWith(ctx, c, action) })
}

func (run *syncRun) syncWith(ctx context.Context, c *ldap.Conn, action string) error {
	if err := bindAs(c, run.set.BindDN, run.p.BindCredential); err != nil {
		return classify(err, run.set, "bind as "+run.set.BindDN)
	}
	if run.set.GroupsDN != "" {
		if err := run.loadGroups(ctx, c); err != nil {
			return err
		}
	}
	more := ""
	if action == ActionChanged && run.p.ChangedSince > 0 {
		more = run.set.changedFilter(time.UnixMilli(run.p.ChangedSince))
	}
	req := ldap.NewSearchRequest(run.set.UsersDN, run.set.searchScope(), ldap.NeverDerefAliases, 0, 0, false,
		run.set.userFilter(more), run.set.attributes(), nil)
	page := make([]*ldap.Entry, 0, run.set.Pagination)
	err := eachEntry(ctx, c, req, run.set.Pagination, func(e *ldap.Entry) error {
		page = append(page, e)
		if len(page) < run.set.Pagination {
			return nil
		}
		err := run.writePage(ctx, page)
		page = page[:0]
		return err
	})
	if err == nil {
		err = run.writePage(ctx, page)
	}
	if err != nil {
		return classify(err, run.set, "search the users")
	}
	if action == ActionFull {
		return run.removeMissing(ctx)
	}
	return nil
}

// writePage writes the users of a page of entries in one transaction:
// the page was read before it began, so no directory round trip happens
// inside it.
func (run *syncRun) writePage(ctx context.Context, page []*ldap.Entry) error {
	if len(page) == 0 {
		return nil
	}
	var created, updated int
	var failures []Failure
	err := run.s.deps.Store.Tx(ctx, func(tx *store.Store) error {
		created, updated, failures, run.ended = 0, 0, nil, nil
		for _, e := range page {
			ok, err := run.writeEntry(ctx, tx, e)
			var ae *apperr.Error
			switch {
			case errors.As(err, &ae) && ae.Status < 500:
				failures = append(failures, Failure{DN: e.DN, Reason: ae.Message})
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
	run.res.Read += len(page)
	run.res.Created += created
	run.res.Updated += updated
	for _, f := range failures {
		run.res.fail(f.DN, f.Reason)
	}
	before := run.prog.processed.Load()
	after := run.prog.processed.Add(int64(len(page)))
	if before/progressEvery != after/progressEvery {
		run.s.deps.Log.Info("user federation sync progress", "realm", run.realm.Name, "provider", run.p.Name,
			"processed", after, "created", run.res.Created, "updated", run.res.Updated, "failed", run.res.Failed)
	}
	return nil
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
func (run *syncRun) writeEntry(ctx context.Context, tx *store.Store, e *ldap.Entry) (entryOutcome, error) {
	eu, err := run.set.readEntry(e)
	if err != nil {
		return entryUnchanged, apperr.Invalid("%v", err)
	}
	if run.seen[eu.ExternalID] {
		return entryUnchanged, apperr.Invalid("another entry has the same %s", run.set.UUIDLDAPAttr)
	}
	run.seen[eu.ExternalID] = true
	link := run.links[eu.ExternalID]
	if link == nil {
		u, err := run.s.createLinked(ctx, tx, run.realm, run.p, eu)
		if err != nil {
			delete(run.seen, eu.ExternalID)
			return entryUnchanged, err
		}
		_, err = run.setGroups(ctx, tx, u.ID, e)
		return entryCreated, err
	}
	// Most entries have not changed: compared with the user as the sync
	// began, they cost no query. A change is written over the user as it
	// is now, which an admin may have changed meanwhile.
	changed := link.DN != eu.DN
	if cached := run.users[link.UserID]; cached != nil && !changed {
		_, profileChanged, err := profileOf(cached, eu, run.set)
		if err != nil {
			return entryUnchanged, apperr.Invalid("%v", err)
		}
		changed = profileChanged
	} else {
		changed = true
	}
	if changed {
		u, err := tx.GetUser(ctx, run.realm.ID, link.UserID)
		if err != nil {
			return entryUnchanged, err
		}
		var ended []*store.Session
		if changed, ended, err = run.s.refreshUser(ctx, tx, run.realm, u, link, eu, run.set); err != nil {
			return entryUnchanged, err
		}
		run.ended = append(run.ended, ended...)
	}
	userID := link.UserID
	groupsChanged, err := run.setGroups(ctx, tx, userID, e)
	if err != nil || !(changed || groupsChanged) {
		return entryUnchanged, err
	}
	return entryUpdated, nil
}

// loadGroups reads the directory's groups and the realm's, for the
// memberships of every entry.
func (run *syncRun) loadGroups(ctx context.Context, c *ldap.Conn) error {
	var err error
	if run.groups, err = loadGroups(ctx, c, run.set); err != nil {
		return classify(err, run.set, "read the groups under "+run.set.GroupsDN)
	}
	if run.realmGroups, err = loadRealmGroups(ctx, run.s.deps.Store, run.realm, run.s.deps.Now().UnixMilli()); err != nil {
		return err
	}
	run.memberships, err = run.s.deps.Store.GroupMemberships(ctx, run.realm.ID)
	return err
}

// setGroups keeps the memberships of an entry's user in step with its
// groups, when groups are mapped.
func (run *syncRun) setGroups(ctx context.Context, tx *store.Store, userID string, e *ldap.Entry) (bool, error) {
	if run.groups == nil {
		return false, nil
	}
	wanted := run.groups.of(normDN(e.DN), run.set.memberOfDNs(e), run.set.NestedGroups)
	return run.realmGroups.setMemberships(ctx, tx, userID, wanted, run.memberships[userID],
		func(name string) bool { return run.groups.byName[name] })
}

// removeMissing disables, or deletes, the linked users whose entry the
// full sync did not meet, through the identity core.
func (run *syncRun) removeMissing(ctx context.Context) error {
	var missing []*store.FederationLink
	for id, l := range run.links {
		if !run.seen[id] {
			missing = append(missing, l)
		}
	}
	for start := 0; start < len(missing); start += run.set.Pagination {
		batch := missing[start:min(start+run.set.Pagination, len(missing))]
		var disabled, deleted int
		err := run.s.deps.Store.Tx(ctx, func(tx *store.Store) error {
			disabled, deleted, run.ended = 0, 0, nil
			for _, l := range batch {
				u, err := tx.GetUser(ctx, run.realm.ID, l.UserID)
				if errors.Is(err, store.ErrNotFound) {
					continue
				} else if err != nil {
					return err
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
	}
	return nil
}
