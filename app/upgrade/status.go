package upgrade

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
)

// Status answers where the server stands: the database's schema version
// and this binary's, what is pending, and the last upgrade.
func (s *Service) Status(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st := s.deps.Store
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	pending, err := st.PendingMigrations(ctx)
	if err != nil {
		return err
	}
	out := Status{Mode: s.deps.Mode, Backend: s.backend(), SchemaVersion: v, BinarySchemaVersion: st.LatestSchemaVersion(),
		BinaryVersion: s.deps.BinaryVersion, PendingVersions: []int{}, ReadOnly: s.pending.Load(), State: StateCurrent}
	for _, p := range pending {
		out.PendingVersions = append(out.PendingVersions, p.Version)
	}
	ups, err := s.upgrades()
	if err != nil {
		return err
	}
	if len(ups) > 0 {
		out.LastUpgrade = &ups[0]
	}
	switch {
	case s.runningID() != "":
		out.State = StateUpgrading
	case s.stopping.Load():
		out.State = StateRollingBack
	case s.restart.Load():
		out.State = StateRestart
	case len(pending) > 0:
		out.State = StatePending
	}
	return httpx.OK(w, out)
}

// History lists the upgrades, newest first (first and max page it).
func (s *Service) History(w http.ResponseWriter, r *http.Request) error {
	ups, err := s.upgrades()
	if err != nil {
		return err
	}
	return page(w, r, ups)
}

// Audit lists the entries of the history file, newest first: every
// upgrade and rollback begun, ended or refused, with who asked.
func (s *Service) Audit(w http.ResponseWriter, r *http.Request) error {
	entries, err := s.entries()
	if err != nil {
		return err
	}
	slices.Reverse(entries)
	return page(w, r, entries)
}

// Get answers one upgrade.
func (s *Service) Get(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["upgradeId"]
	ups, err := s.upgrades()
	if err != nil {
		return err
	}
	for _, u := range ups {
		if u.ID == id {
			return httpx.OK(w, u)
		}
	}
	return apperr.NotFound("upgrade " + id)
}

func page[T any](w http.ResponseWriter, r *http.Request, items []T) error {
	first, max, err := httpx.FirstMax(r.URL.Query(), httpx.DefaultPageSize)
	if err != nil {
		return err
	}
	items = items[min(first, len(items)):]
	return httpx.OK(w, append([]T{}, items[:min(max, len(items))]...))
}

// entries reads the history file, oldest first; none on PostgreSQL.
func (s *Service) entries() ([]AuditEntry, error) {
	if s.history == nil {
		return nil, nil
	}
	entries, skipped, err := s.history.read()
	if skipped > 0 {
		s.deps.Log.Warn("upgrade history: unreadable lines skipped (a write cut short by a crash?)",
			"file", s.history.path, "lines", skipped)
	}
	return entries, err
}

// upgrades are the upgrades the history tells of, newest first.
func (s *Service) upgrades() ([]Upgrade, error) {
	entries, err := s.entries()
	if err != nil {
		return nil, err
	}
	return fold(entries, s.runningID()), nil
}

func (s *Service) upgrade(id string) (Upgrade, error) {
	ups, err := s.upgrades()
	if err != nil {
		return Upgrade{}, err
	}
	for _, u := range ups {
		if u.ID == id {
			return u, nil
		}
	}
	return Upgrade{}, errors.New("upgrade " + id + " is not in the history")
}

// record appends e to the history, stamped now. On PostgreSQL there is
// no file, and nothing is recorded.
func (s *Service) record(e AuditEntry) error {
	if s.history == nil {
		return nil
	}
	e.Timestamp = s.deps.Now().UnixMilli()
	return s.history.append(e)
}

// refuse records a request turned down, and answers err. A refusal that
// cannot be recorded is logged: the caller still learns why.
func (s *Service) refuse(ctx context.Context, action Action, actor Actor, upgradeID string, err error) error {
	if rerr := s.record(AuditEntry{Actor: actor, Action: action, Outcome: OutcomeRefused, UpgradeID: upgradeID,
		BinaryVersion: s.deps.BinaryVersion, Detail: apperr.Message(err)}); rerr != nil {
		s.deps.Log.ErrorContext(ctx, "upgrade: a refusal was not recorded", "action", action, "err", rerr)
	}
	return err
}
