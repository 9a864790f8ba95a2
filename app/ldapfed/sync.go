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
	run := syncRun{s: s, realm: realm, p: p, set: set, res: res, prog: prog, start: start.UnixMilli()}
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

// syncRun is one sync's state. It holds one page of entries at a time,
// and of the directory as a whole only the set of the IDs it met: the
// users a page is compared with are read with the page.
type syncRun struct {
	s     *Service
	realm *store.Realm
	p     *store.FederationProvider
	set   *Settings
	res   *SyncResult
	prog  *progress
	start int64  // Unix milliseconds
	seen  *idSet // external IDs met in the directory
	// first says the provider had no linked user when the sync began (its
	// first import): its entries have no users to compare with, and no
	// user can be missing.
	first bool
	// With group mapping: the directory's groups and the realm's.
	groups      *directoryGroups
	realmGroups *realmGroups
	// ended holds the sessions the transaction under way ended, passed on
	// once it commits.
	ended []*store.Session
}

func (run *syncRun) sync(ctx context.Context, action string) error {
	run.seen = newIDSet()
	linked, err := run.s.deps.Store.FederationLinksAfter(ctx, run.realm.ID, run.p.ID, "", 1)
	if err != nil {
		return err
	}
	run.first = len(linked) == 0
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
	page := make([]pageEntry, 0, run.set.Pagination)
	err := eachEntry(ctx, c, req, fixed(run.set.Pagination), func(e *ldap.Entry) error {
		page = append(page, run.pageEntry(e))
		if len(page) < run.set.Pagination {
			return nil
		}
		err := run.writePage(ctx, page)
		clear(page) // the page's strings are garbage while the next one arrives
		page = page[:0]
		return err
	})
	if err == nil {
		err = run.writePage(ctx, page)
	}
	if err != nil {
		return classify(err, run.set, "search the users")
	}
	run.groups = nil // every entry is written: the members' index is garbage
	if action == ActionFull && !run.first {
		return run.removeMissing(ctx)
	}
	return nil
}

// loadGroups reads the directory's groups and the realm's, for the
// memberships of every entry.
func (run *syncRun) loadGroups(ctx context.Context, c *ldap.Conn) error {
	var err error
	if run.groups, err = loadGroups(ctx, c, run.set); err != nil {
		return classify(err, run.set, "read the groups under "+run.set.GroupsDN)
	}
	run.realmGroups, err = loadRealmGroups(ctx, run.s.deps.Store, run.realm, run.s.deps.Now().UnixMilli())
	return err
}
