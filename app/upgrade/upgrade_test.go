package upgrade_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/store"
)

// manual starts the server as serve --upgrade=manual does, with the
// admin API key the database holds (none configured), counting the calls
// of its Shutdown hook.
func manual(shutdowns *atomic.Int32) func(*app.Config) {
	return func(c *app.Config) {
		c.Upgrade = upgrade.ModeManual
		c.AdminAPIKey = ""
		c.Shutdown = func() { shutdowns.Add(1) }
	}
}

func mustUnavailable(t *testing.T, r *apptest.Response, what string) {
	t.Helper()
	apptest.MustError(t, r, http.StatusServiceUnavailable, "upgrade_pending", "")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("%s: 503 without Retry-After", what)
	}
}

// An upgrade from a database of an older schema under --upgrade=manual:
// read-only until the upgrade, then the whole server; then a rollback
// puts the snapshot back, the data equal to it, and stops the server.
func TestManualUpgradeAndRollback(t *testing.T) {
	path, base := olderDatabase(t, 5)
	before := tableRows(t, path)
	st := openStore(t, path, true)
	latest := st.LatestSchemaVersion()
	if v, _ := st.SchemaVersion(ctx); v != base {
		t.Fatalf("the store opened with DeferMigrations migrated the database: version %d, want %d", v, base)
	}
	var shutdowns atomic.Int32
	s, served := realapp.Start(t, st, path, manual(&shutdowns))
	if served.App() != nil {
		t.Fatal("the whole server was built on a database that waits for its upgrade")
	}

	t.Run("read-only while pending", func(t *testing.T) {
		for _, rq := range []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, "/admin/realms", nil},
			{http.MethodPost, "/admin/realms", map[string]any{"name": "beta"}},
			{http.MethodGet, "/realms/acme/.well-known/openid-configuration", nil},
			{http.MethodPost, "/realms/acme/protocol/openid-connect/token", "grant_type=password&username=user001&password=x"},
			{http.MethodGet, "/", nil},
		} {
			mustUnavailable(t, s.Admin(rq.method, rq.path, rq.body), rq.method+" "+rq.path)
		}
		apptest.MustStatus(t, s.Request(http.MethodGet, "/health/live", nil), http.StatusOK)
		ready := s.Request(http.MethodGet, "/health/ready", nil)
		if ready.Status != http.StatusServiceUnavailable || ready.Object(t)["status"] != "upgrade-pending" {
			t.Errorf("/health/ready: %d %s", ready.Status, ready.Body)
		}
		apptest.MustError(t, s.Request(http.MethodGet, "/admin/upgrade/status", nil), http.StatusUnauthorized, "unauthorized", "")
		other := s.Request(http.MethodGet, "/admin/upgrade/status", nil, "Authorization: Bearer ipk_abc_def")
		apptest.MustError(t, other, http.StatusUnauthorized, "unauthorized", "")
		if !strings.Contains(other.Object(t)["error_description"].(string), "bootstrap admin API key") {
			t.Errorf("a named key's refusal does not say what is accepted: %s", other.Body)
		}
	})

	t.Run("status and pre-validation", func(t *testing.T) {
		var status upgrade.Status
		r := s.Admin(http.MethodGet, "/admin/upgrade/status", nil)
		apptest.MustStatus(t, r, http.StatusOK)
		r.Decode(t, &status)
		if status.State != upgrade.StatePending || !status.ReadOnly || status.Mode != upgrade.ModeManual ||
			status.SchemaVersion != base || status.BinarySchemaVersion != latest || status.Backend != "sqlite" ||
			!slices.Contains(status.PendingVersions, latest) || status.LastUpgrade != nil {
			t.Errorf("status %+v", status)
		}
		var pv upgrade.PreValidation
		r = s.Admin(http.MethodGet, "/admin/upgrade/pre-validation", nil)
		apptest.MustStatus(t, r, http.StatusOK)
		r.Decode(t, &pv)
		if !pv.Ready || pv.SchemaVersion != base || len(pv.Pending) != latest-base || pv.Disk == nil || pv.Disk.FreeBytes <= 0 {
			t.Fatalf("pre-validation %s", r.Body)
		}
		last := pv.Pending[len(pv.Pending)-1]
		if last.Version != latest || len(last.Changes) == 0 || last.About == "" {
			t.Errorf("pending migration %+v", last)
		}
		for _, c := range pv.Checks {
			if c.Status != upgrade.CheckOK {
				t.Errorf("check %+v", c)
			}
		}
		var h upgrade.Health
		r = s.Admin(http.MethodGet, "/admin/upgrade/health", nil)
		apptest.MustStatus(t, r, http.StatusServiceUnavailable)
		r.Decode(t, &h)
		if h.Status != upgrade.HealthFailed || checkNamed(h.Checks, "schema-version").Status != upgrade.CheckFailed {
			t.Errorf("health before the upgrade %s", r.Body)
		}
		apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/upgrade/config-compatibility", nil), http.StatusOK)
		refused := s.Admin(http.MethodPost, "/admin/upgrade/rollback", nil)
		apptest.MustError(t, refused, http.StatusConflict, "invalid_state", "")
		if !strings.Contains(refused.Object(t)["error_description"].(string), "no snapshot") {
			t.Errorf("rollback without a snapshot: %s", refused.Body)
		}
	})

	var up upgrade.Upgrade
	t.Run("upgrade", func(t *testing.T) {
		r := s.Admin(http.MethodPost, "/admin/upgrade", map[string]any{"targetVersion": latest})
		apptest.MustStatus(t, r, http.StatusCreated)
		r.Decode(t, &up)
		if up.Status != upgrade.UpgradeSucceeded || up.FromVersion != base || up.ToVersion != latest ||
			up.StartedBy.Name != "bootstrap" || up.SnapshotBytes == 0 || r.Header.Get("Location") != apptest.BaseURL+"/admin/upgrade/"+up.ID {
			t.Fatalf("upgrade %s (Location %s)", r.Body, r.Header.Get("Location"))
		}
		if filepath.Dir(up.Snapshot) != filepath.Dir(path) || !strings.HasPrefix(filepath.Base(up.Snapshot), "idenplane.db.pre-upgrade-") {
			t.Errorf("snapshot %s is not beside the database", up.Snapshot)
		}
		if v, _ := st.SchemaVersion(ctx); v != latest {
			t.Errorf("schema version %d after the upgrade, want %d", v, latest)
		}
		if served.App() == nil {
			t.Fatal("the whole server was not built after the upgrade")
		}
		apptest.MustError(t, s.Admin(http.MethodPost, "/admin/upgrade", map[string]any{"targetVersion": latest}),
			http.StatusConflict, "invalid_state", "")
	})

	t.Run("status, history, audit and health after it", func(t *testing.T) {
		var status upgrade.Status
		s.Admin(http.MethodGet, "/admin/upgrade/status", nil).Decode(t, &status)
		if status.State != upgrade.StateCurrent || status.ReadOnly || len(status.PendingVersions) != 0 ||
			status.LastUpgrade == nil || status.LastUpgrade.ID != up.ID {
			t.Errorf("status %+v", status)
		}
		var history []upgrade.Upgrade
		s.Admin(http.MethodGet, "/admin/upgrade/history", nil).Decode(t, &history)
		if len(history) != 1 || !reflect.DeepEqual(history[0], up) {
			t.Errorf("history %+v, want [%+v]", history, up)
		}
		var one upgrade.Upgrade
		r := s.Admin(http.MethodGet, "/admin/upgrade/"+up.ID, nil)
		apptest.MustStatus(t, r, http.StatusOK)
		if r.Decode(t, &one); !reflect.DeepEqual(one, up) {
			t.Errorf("GET /admin/upgrade/%s: %+v", up.ID, one)
		}
		apptest.MustError(t, s.Admin(http.MethodGet, "/admin/upgrade/nope", nil), http.StatusNotFound, "not_found", "")
		var audit []upgrade.AuditEntry
		s.Admin(http.MethodGet, "/admin/upgrade/audit", nil).Decode(t, &audit)
		var outcomes []string
		for _, e := range audit {
			outcomes = append(outcomes, string(e.Action)+" "+string(e.Outcome))
			if e.Actor.Type != "api-key" || e.Actor.Name != "bootstrap" || e.Actor.IP == "" || e.Timestamp == 0 {
				t.Errorf("audit entry without its actor: %+v", e)
			}
		}
		want := []string{"upgrade refused", "upgrade succeeded", "upgrade started", "rollback refused"}
		if !slices.Equal(outcomes, want) {
			t.Errorf("audit, newest first: %v, want %v", outcomes, want)
		}
		var h upgrade.Health
		r = s.Admin(http.MethodGet, "/admin/upgrade/health", nil)
		apptest.MustStatus(t, r, http.StatusOK)
		if r.Decode(t, &h); h.Status != upgrade.HealthOK || len(h.Checks) != 4 {
			t.Errorf("health %s", r.Body)
		}
		var compat upgrade.Compatibility
		s.Admin(http.MethodGet, "/admin/upgrade/config-compatibility", nil).Decode(t, &compat)
		if compat.FromVersion != base || compat.ToVersion != latest {
			t.Errorf("config compatibility after the upgrade starts at %d, want the version it came from, %d", compat.FromVersion, base)
		}
	})

	t.Run("writes work", func(t *testing.T) {
		s.CreateRealm("beta")
		s.CreateUser("acme", map[string]any{"username": "carol", "email": "carol@acme.test"})
		apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/users?username=carol", nil), http.StatusOK)
	})

	t.Run("rollback capability", func(t *testing.T) {
		var c upgrade.Capability
		r := s.Admin(http.MethodGet, "/admin/upgrade/rollback/capability", nil)
		apptest.MustStatus(t, r, http.StatusOK)
		r.Decode(t, &c)
		if !c.Available || c.Snapshot == nil || c.Snapshot.SchemaVersion != base || c.Snapshot.Path != up.Snapshot || c.Loss == nil {
			t.Fatalf("capability %s", r.Body)
		}
		users := tableLoss(c.Loss, "users")
		if users == nil || users.CurrentRows-users.SnapshotRows < 1 || users.WrittenSince < 1 {
			t.Errorf("the user written since the snapshot is not counted: %+v", users)
		}
		if realms := tableLoss(c.Loss, "realms"); realms == nil || realms.CurrentRows-realms.SnapshotRows < 1 {
			t.Errorf("the realm written since the snapshot is not counted: %+v", realms)
		}
		if c.Loss.RowsAdded < 2 || c.Loss.Measured == "" {
			t.Errorf("loss %+v", c.Loss)
		}
		apptest.MustError(t, s.Admin(http.MethodPost, "/admin/upgrade/rollback", map[string]any{"upgradeId": "another"}),
			http.StatusConflict, "invalid_state", "")
	})

	t.Run("rollback", func(t *testing.T) {
		var res upgrade.RollbackResult
		r := s.Admin(http.MethodPost, "/admin/upgrade/rollback", map[string]any{"upgradeId": up.ID})
		apptest.MustStatus(t, r, http.StatusOK)
		r.Decode(t, &res)
		if !res.ServerStopping || res.SchemaVersion != base || res.Upgrade.Status != upgrade.UpgradeRolledBack ||
			res.Upgrade.RolledBackBy == nil || res.Loss == nil {
			t.Errorf("rollback %s", r.Body)
		}
		if n := shutdowns.Load(); n != 1 {
			t.Errorf("Shutdown called %d times, want once", n)
		}
		mustUnavailable(t, s.Admin(http.MethodGet, "/admin/realms", nil), "after the rollback")
		mustUnavailable(t, s.Admin(http.MethodGet, "/admin/upgrade/status", nil), "after the rollback")
		apptest.MustStatus(t, s.Request(http.MethodGet, "/health/live", nil), http.StatusOK)
		for _, sidecar := range []string{"-wal", "-shm"} {
			if _, err := os.Stat(path + sidecar); err == nil {
				t.Errorf("%s%s is left beside the restored database", path, sidecar)
			}
		}
	})

	t.Run("the database is the snapshot", func(t *testing.T) {
		restored, snapshot := tableRows(t, path), tableRows(t, up.Snapshot)
		if !reflect.DeepEqual(restored, snapshot) {
			for table := range snapshot {
				if !reflect.DeepEqual(restored[table], snapshot[table]) {
					t.Errorf("table %s differs from the snapshot:\n restored %v\n snapshot %v", table, restored[table], snapshot[table])
				}
			}
			t.Fatalf("the restored database has tables %d, the snapshot %d", len(restored), len(snapshot))
		}
		if !reflect.DeepEqual(restored, before) {
			t.Errorf("the restored database differs from the one before the upgrade")
		}
		if len(restored["users"]) != 5 || len(restored["realms"]) != 1 {
			t.Errorf("restored %d users and %d realms, want the older database's 5 and 1", len(restored["users"]), len(restored["realms"]))
		}
		older, _ := olderSchema(t, apptest.Schema(t))
		old, err := store.Open(ctx, store.Config{Path: path, Schema: older, MasterKey: apptest.MasterKey(), Lock: true})
		if err != nil {
			t.Fatalf("the older binary cannot open the restored database: %v", err)
		}
		defer old.Close()
		if v, _ := old.SchemaVersion(ctx); v != base {
			t.Errorf("restored schema version %d, want %d", v, base)
		}
	})

	t.Run("the history survives the rollback", func(t *testing.T) {
		f, err := os.Open(upgrade.HistoryPath(path))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var outcomes []string
		for sc := bufio.NewScanner(f); sc.Scan(); {
			var e upgrade.AuditEntry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("history line %q: %v", sc.Text(), err)
			}
			outcomes = append(outcomes, string(e.Action)+" "+string(e.Outcome))
		}
		want := []string{"rollback refused", "upgrade started", "upgrade succeeded", "upgrade refused", "rollback refused",
			"rollback started", "rollback succeeded"}
		if !slices.Equal(outcomes, want) {
			t.Errorf("history file: %v, want %v", outcomes, want)
		}
	})
}

func checkNamed(checks []upgrade.Check, name string) upgrade.Check {
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	return upgrade.Check{}
}

func tableLoss(l *upgrade.Loss, table string) *upgrade.TableLoss {
	for i := range l.Tables {
		if l.Tables[i].Table == table {
			return &l.Tables[i]
		}
	}
	return nil
}
