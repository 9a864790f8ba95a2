package upgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// lossMeasured says what Loss counts, in its answer.
const lossMeasured = "per table, the rows of the database now against the snapshot's count (a table the upgrade " +
	"created counts all its rows), and the rows whose created_at or updated_at (milliseconds) is at or after the " +
	"snapshot: a row updated in place shows only there, and a table without either column only in the counts"

// Capability says whether a rollback can run, the upgrade it would undo,
// its snapshot, and what the writes since would cost (Loss).
func (s *Service) Capability(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if s.deps.Store.Postgres() {
		return httpx.OK(w, Capability{Reason: errPostgresUpgrade.Message})
	}
	target, err := s.rollbackTarget("")
	var refused *apperr.Error
	if errors.As(err, &refused) {
		return httpx.OK(w, Capability{Reason: refused.Message})
	}
	if err != nil {
		return err
	}
	c := Capability{Available: true, Upgrade: &target}
	info, facts, err := readSnapshot(ctx, target)
	if err != nil {
		return httpx.OK(w, Capability{Upgrade: &target, Reason: "the snapshot cannot be read: " + err.Error()})
	}
	c.Snapshot = info
	if c.Loss, err = s.measureLoss(ctx, target, facts); err != nil {
		return err
	}
	if s.deps.Shutdown == nil {
		c.Available, c.Reason = false, errNoShutdown.Message
	}
	return httpx.OK(w, c)
}

var errNoShutdown = apperr.New(http.StatusConflict, apperr.CodeInvalidState,
	"this server was started without the means to stop itself, which a rollback needs: stop it, and put the snapshot "+
		"back with idenplane restore")

// Rollback puts the snapshot of the last upgrade back in place of the
// database (store.RestoreSnapshot), records it, and stops the server:
// the binary of the snapshot's schema version starts on the file next.
// The body may name the upgrade (RollbackInput), as a guard.
func (s *Service) Rollback(w http.ResponseWriter, r *http.Request) error {
	var in RollbackInput
	if err := readOptionalBody(r, &in); err != nil {
		return err
	}
	ctx := context.WithoutCancel(r.Context())
	actor := s.caller(r)
	refuse := func(err error) error { return s.refuse(ctx, ActionRollback, actor, in.UpgradeID, err) }
	st := s.deps.Store
	if st.Postgres() {
		return refuse(errPostgresUpgrade)
	}
	if s.deps.Shutdown == nil {
		return refuse(errNoShutdown)
	}
	if !s.work.TryLock() {
		return refuse(errBusy)
	}
	defer s.work.Unlock()
	target, err := s.rollbackTarget(in.UpgradeID)
	if err != nil {
		return refuse(err)
	}
	_, facts, err := readSnapshot(ctx, target)
	if err != nil {
		return refuse(apperr.New(http.StatusConflict, apperr.CodeInvalidState, "the snapshot cannot be read: %v", err))
	}
	loss, err := s.measureLoss(ctx, target, facts)
	if err != nil {
		return err
	}
	current, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	entry := AuditEntry{Actor: actor, Action: ActionRollback, UpgradeID: target.ID, FromVersion: current,
		ToVersion: facts.SchemaVersion, BinaryVersion: s.deps.BinaryVersion, Snapshot: target.Snapshot,
		Detail: fmt.Sprintf("%d rows added and %d rows written since the snapshot are discarded", loss.RowsAdded, loss.RowsWrittenSince)}
	started := entry
	started.Outcome = OutcomeStarted
	if err := s.record(started); err != nil {
		return apperr.New(http.StatusInternalServerError, apperr.CodeUpgradeFailed,
			"nothing was changed: the rollback could not be recorded: %v", err)
	}
	s.deps.Log.WarnContext(ctx, "rollback started", "upgrade", target.ID, "snapshot", target.Snapshot, "by", actor.Name)
	// From here on the gate answers 503 to every other request: the store
	// is about to close.
	s.stopping.Store(true)
	if err := st.RestoreSnapshot(ctx, target.Snapshot); err != nil {
		failed := entry
		failed.Outcome, failed.Detail = OutcomeFailed, err.Error()
		if rerr := s.record(failed); rerr != nil {
			s.deps.Log.ErrorContext(ctx, "rollback: its failure was not recorded", "err", rerr)
		}
		s.deps.Log.ErrorContext(ctx, "rollback failed", "upgrade", target.ID, "err", err)
		if !errors.Is(err, store.ErrStoreClosed) {
			s.stopping.Store(false)
			return apperr.New(http.StatusInternalServerError, apperr.CodeUpgradeFailed,
				"rollback failed before the database was touched, and the server goes on: %v", err)
		}
		s.deps.Shutdown()
		return apperr.New(http.StatusInternalServerError, apperr.CodeUpgradeFailed,
			"rollback failed after the database was closed: %v; the server stops: start it again, and the "+
				"database is the one it had, unless the snapshot is in its place (see the audit)", err)
	}
	done := entry
	done.Outcome = OutcomeSucceeded
	if err := s.record(done); err != nil {
		s.deps.Log.ErrorContext(ctx, "rollback: its success was not recorded", "err", err)
	}
	s.deps.Log.WarnContext(ctx, "rollback done: the server stops; start the binary of the snapshot's schema version",
		"upgrade", target.ID, "schemaVersion", facts.SchemaVersion)
	s.deps.Shutdown()
	u, err := s.upgrade(target.ID)
	if err != nil {
		return err
	}
	return httpx.OK(w, RollbackResult{Upgrade: u, SchemaVersion: facts.SchemaVersion, Loss: loss, ServerStopping: true})
}

// rollbackTarget is the upgrade a rollback undoes: the last one, with its
// snapshot on disk, not rolled back already. The answer to anything else
// is a 409 saying why.
func (s *Service) rollbackTarget(id string) (Upgrade, error) {
	ups, err := s.upgrades()
	if err != nil {
		return Upgrade{}, err
	}
	refuse := func(format string, args ...any) (Upgrade, error) {
		return Upgrade{}, apperr.New(http.StatusConflict, apperr.CodeInvalidState, format, args...)
	}
	if len(ups) == 0 {
		return refuse("no snapshot to roll back to: no upgrade was made through this server")
	}
	last := ups[0]
	switch {
	case id != "" && id != last.ID:
		return refuse("only the last upgrade, %s, can be rolled back, not %s", last.ID, id)
	case last.Status == UpgradeRunning:
		return refuse("upgrade %s is under way", last.ID)
	case last.Status == UpgradeRolledBack:
		return refuse("no snapshot to roll back to: the last upgrade, %s, was rolled back already", last.ID)
	case last.Snapshot == "":
		return refuse("no snapshot to roll back to: upgrade %s failed before its snapshot was taken, and changed nothing", last.ID)
	}
	if _, err := os.Stat(last.Snapshot); err != nil {
		if last.Status == UpgradeInterrupted {
			// The snapshot is renamed into place before the first
			// migration: without it, none ran.
			return refuse("no snapshot to roll back to: upgrade %s was cut short before its snapshot was whole, and changed nothing", last.ID)
		}
		return refuse("no snapshot to roll back to: the snapshot of upgrade %s, %s, is gone", last.ID, last.Snapshot)
	}
	return last, nil
}

func readSnapshot(ctx context.Context, u Upgrade) (*SnapshotInfo, *store.SnapshotFacts, error) {
	info, err := os.Stat(u.Snapshot)
	if err != nil {
		return nil, nil, err
	}
	facts, err := store.ReadSnapshot(ctx, u.Snapshot, false)
	if err != nil {
		return nil, nil, err
	}
	return &SnapshotInfo{Path: u.Snapshot, Bytes: info.Size(), SchemaVersion: facts.SchemaVersion,
		TakenTimestamp: u.StartedTimestamp}, facts, nil
}

// measureLoss compares the database with the snapshot (lossMeasured).
func (s *Service) measureLoss(ctx context.Context, u Upgrade, snap *store.SnapshotFacts) (*Loss, error) {
	since := time.UnixMilli(u.StartedTimestamp)
	now, err := s.deps.Store.RowCounts(ctx)
	if err != nil {
		return nil, err
	}
	written, err := s.deps.Store.RowsWrittenSince(ctx, since)
	if err != nil {
		return nil, err
	}
	l := &Loss{Measured: lossMeasured, SinceTimestamp: u.StartedTimestamp, Tables: []TableLoss{}}
	tables := make([]string, 0, len(now)+len(snap.Rows))
	for t := range now {
		tables = append(tables, t)
	}
	for t := range snap.Rows {
		if _, ok := now[t]; !ok {
			tables = append(tables, t)
		}
	}
	slices.Sort(tables)
	for _, t := range tables {
		before, inSnapshot := snap.Rows[t]
		tl := TableLoss{Table: t, SnapshotRows: before, CurrentRows: now[t], WrittenSince: written[t], NotInSnapshot: !inSnapshot}
		if tl.SnapshotRows == tl.CurrentRows && tl.WrittenSince == 0 && inSnapshot {
			continue
		}
		if d := tl.CurrentRows - tl.SnapshotRows; d > 0 {
			l.RowsAdded += d
		} else {
			l.RowsRemoved -= d
		}
		l.RowsWrittenSince += tl.WrittenSince
		l.Tables = append(l.Tables, tl)
	}
	return l, nil
}

// readOptionalBody reads a JSON body into v when there is one.
func readOptionalBody(r *http.Request, v any) error {
	if r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return httpx.DecodeJSON(r, v)
}
