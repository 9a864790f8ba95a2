package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
)

// errPostgresUpgrade answers an upgrade or rollback asked of a PostgreSQL
// database: the server takes no snapshot of one.
var errPostgresUpgrade = apperr.New(http.StatusNotImplemented, apperr.CodeNotSupported,
	"the server takes no snapshot of a PostgreSQL database, so it neither upgrades nor rolls one back: back it up with "+
		"pg_dump, then run `idenplane migrate` with this binary (or restart it with --upgrade=auto); to go back, "+
		"pg_restore the dump and start the older binary")

// errBusy answers an upgrade or rollback asked while one is under way.
var errBusy = apperr.New(http.StatusConflict, apperr.CodeInvalidState, "an upgrade or rollback is under way: see GET /admin/upgrade/status")

// Start upgrades the database to this binary's schema: checks, a snapshot
// beside the database, the migrations, each step in the history before it
// is answered. It runs to its end even if the caller hangs up. Answered
// 201 with the upgrade; 500 upgrade_failed with the step that failed.
func (s *Service) Start(w http.ResponseWriter, r *http.Request) error {
	var in StartInput
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	ctx := context.WithoutCancel(r.Context())
	actor := s.caller(r)
	refuse := func(err error) error { return s.refuse(ctx, ActionUpgrade, actor, "", err) }
	st := s.deps.Store
	latest := st.LatestSchemaVersion()
	if err := s.checkTarget(in.TargetVersion, latest); err != nil {
		return refuse(err)
	}
	if st.Postgres() {
		return refuse(errPostgresUpgrade)
	}
	if !s.work.TryLock() {
		return refuse(errBusy)
	}
	defer s.work.Unlock()
	from, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if from >= latest {
		return refuse(apperr.New(http.StatusConflict, apperr.CodeInvalidState,
			"the database is at schema version %d, this binary's: there is nothing to upgrade", from))
	}
	if p := s.preValidate(ctx); !passed(p.Checks) {
		var failed []string
		for _, c := range p.Checks {
			if c.Status == CheckFailed || c.Status == CheckError {
				failed = append(failed, c.Name+": "+c.Detail)
			}
		}
		return refuse(apperr.New(http.StatusConflict, apperr.CodeInvalidState,
			"pre-validation failed, nothing was changed: %s (GET /admin/upgrade/pre-validation)", strings.Join(failed, "; ")))
	}

	id := uuid.NewString()
	snapshot := snapshotPath(st.Path(), from, s.deps.Now())
	entry := AuditEntry{Actor: actor, Action: ActionUpgrade, UpgradeID: id, FromVersion: from, ToVersion: latest,
		BinaryVersion: s.deps.BinaryVersion, Snapshot: snapshot}
	started := entry
	started.Outcome = OutcomeStarted
	if err := s.record(started); err != nil {
		return apperr.New(http.StatusInternalServerError, apperr.CodeUpgradeFailed,
			"nothing was changed: the upgrade could not be recorded: %v", err)
	}
	s.setRunning(id)
	defer s.setRunning("")
	s.deps.Log.InfoContext(ctx, "upgrade started", "upgrade", id, "from", from, "to", latest, "snapshot", snapshot, "by", actor.Name)

	fail := func(e AuditEntry, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		e.Outcome, e.Detail = OutcomeFailed, msg
		if err := s.record(e); err != nil {
			s.deps.Log.ErrorContext(ctx, "upgrade: its failure was not recorded", "upgrade", id, "err", err)
		}
		s.deps.Log.ErrorContext(ctx, "upgrade failed", "upgrade", id, "err", msg)
		return apperr.New(http.StatusInternalServerError, apperr.CodeUpgradeFailed, "upgrade %s failed: %s", id, msg)
	}
	if err := st.Snapshot(ctx, snapshot); err != nil {
		noSnapshot := entry
		noSnapshot.Snapshot = ""
		return fail(noSnapshot, "the snapshot could not be written, and the database was not changed: %v", err)
	}
	if info, err := os.Stat(snapshot); err == nil {
		entry.SnapshotBytes = info.Size()
	}
	if err := st.Migrate(ctx); err != nil {
		reached, _ := st.SchemaVersion(ctx)
		return fail(entry, "%v; each migration is one transaction: the database is at schema version %d, "+
			"and POST /admin/upgrade/rollback puts the snapshot %s back", err, reached, snapshot)
	}
	done := entry
	done.Outcome = OutcomeSucceeded
	if err := s.record(done); err != nil {
		s.deps.Log.ErrorContext(ctx, "upgrade: its success was not recorded", "upgrade", id, "err", err)
	}
	s.deps.Log.InfoContext(ctx, "upgrade succeeded", "upgrade", id, "schemaVersion", latest)
	if s.pending.Load() && s.deps.Upgraded != nil {
		if err := s.deps.Upgraded(ctx); err != nil {
			s.restart.Store(true)
			s.deps.Log.ErrorContext(ctx, "upgrade: the server could not start on the upgraded database", "upgrade", id, "err", err)
			return apperr.New(http.StatusInternalServerError, apperr.CodeUpgradeFailed,
				"the database is upgraded to schema version %d, but the server could not start on it: %v; restart the server", latest, err)
		}
	}
	s.pending.Store(false)
	u, err := s.upgrade(id)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.deps.BaseURL+"/admin/upgrade/"+id, u)
}

// checkTarget accepts the schema version this binary carries, as a number
// or a string of digits, or its release (a leading v aside), and refuses
// anything else saying what it may be.
func (s *Service) checkTarget(raw json.RawMessage, latest int) error {
	may := fmt.Sprintf("this binary upgrades to schema version %d (release %s) only", latest, s.deps.BinaryVersion)
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return apperr.Field("targetVersion", "is required: %s", may)
	}
	var target string
	var n json.Number
	if err := json.Unmarshal(raw, &target); err != nil {
		if err := json.Unmarshal(raw, &n); err != nil {
			return apperr.Field("targetVersion", "must be a schema version (a number) or a release (a string): %s", may)
		}
		target = n.String()
	}
	target = strings.TrimSpace(target)
	if v, err := strconv.Atoi(target); err == nil {
		if v != latest {
			return apperr.Field("targetVersion", "schema version %d: %s", v, may)
		}
		return nil
	}
	if strings.TrimPrefix(target, "v") != strings.TrimPrefix(s.deps.BinaryVersion, "v") || target == "" {
		return apperr.Field("targetVersion", "release %q: %s; start the binary of that release to upgrade to it", target, may)
	}
	return nil
}
