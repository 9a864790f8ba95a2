package upgrade_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idenplane/idenplane/app"
	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/upgrade"
)

// --upgrade=auto, the default, is what serve always did: the store
// migrates the older database at open, the whole server serves at once,
// and there is nothing to upgrade nor any snapshot to roll back to.
func TestAutoModeUnchanged(t *testing.T) {
	path, base := olderDatabase(t, 3)
	st := openStore(t, path, false)
	latest := st.LatestSchemaVersion()
	if v, _ := st.SchemaVersion(ctx); v != latest || base >= latest {
		t.Fatalf("auto mode: the store opened at version %d, want %d (from %d)", v, latest, base)
	}
	var shutdowns atomic.Int32
	s, served := realapp.Start(t, st, path, func(c *app.Config) { c.Shutdown = func() { shutdowns.Add(1) } })
	if served.App() == nil {
		t.Fatal("auto mode did not build the whole server at start")
	}
	var status upgrade.Status
	s.Admin(http.MethodGet, "/admin/upgrade/status", nil).Decode(t, &status)
	if status.Mode != upgrade.ModeAuto || status.State != upgrade.StateCurrent || status.ReadOnly ||
		len(status.PendingVersions) != 0 || status.SchemaVersion != latest {
		t.Errorf("status %+v", status)
	}
	s.CreateRealm("beta")
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/users", nil), http.StatusOK)

	apptest.MustError(t, s.Admin(http.MethodPost, "/admin/upgrade", map[string]any{"targetVersion": latest}),
		http.StatusConflict, "invalid_state", "")
	var c upgrade.Capability
	s.Admin(http.MethodGet, "/admin/upgrade/rollback/capability", nil).Decode(t, &c)
	if c.Available || !strings.Contains(c.Reason, "no snapshot") {
		t.Errorf("capability without a snapshot %+v", c)
	}
	refused := s.Admin(http.MethodPost, "/admin/upgrade/rollback", nil)
	apptest.MustError(t, refused, http.StatusConflict, "invalid_state", "")
	if !strings.Contains(refused.Object(t)["error_description"].(string), "no snapshot") || shutdowns.Load() != 0 {
		t.Errorf("rollback without a snapshot: %s (shutdowns %d)", refused.Body, shutdowns.Load())
	}
	var h upgrade.Health
	r := s.Admin(http.MethodGet, "/admin/upgrade/health", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if r.Decode(t, &h); h.Status != upgrade.HealthOK {
		t.Errorf("health %s", r.Body)
	}
	var audit []upgrade.AuditEntry
	s.Admin(http.MethodGet, "/admin/upgrade/audit", nil).Decode(t, &audit)
	if len(audit) != 2 || audit[0].Outcome != upgrade.OutcomeRefused || audit[0].Action != upgrade.ActionRollback ||
		audit[1].Action != upgrade.ActionUpgrade || !strings.Contains(audit[1].Detail, "nothing to upgrade") {
		t.Errorf("audit %+v", audit)
	}
	var history []upgrade.Upgrade
	s.Admin(http.MethodGet, "/admin/upgrade/history", nil).Decode(t, &history)
	if len(history) != 0 {
		t.Errorf("history %+v, want none", history)
	}
}

// A rollback is refused by a server that cannot stop itself (no Shutdown
// hook), before anything is touched.
func TestRollbackNeedsShutdown(t *testing.T) {
	s := realapp.New(t)
	refused := s.Admin(http.MethodPost, "/admin/upgrade/rollback", nil)
	apptest.MustError(t, refused, http.StatusConflict, "invalid_state", "")
	if !strings.Contains(refused.Object(t)["error_description"].(string), "stop itself") {
		t.Errorf("rollback without Shutdown: %s", refused.Body)
	}
}

// Under --upgrade=auto a database the store did not migrate is refused at
// start: the server's code would run on a schema it does not know.
func TestAutoModeRefusesAStoreBehind(t *testing.T) {
	path, _ := olderDatabase(t, 1)
	st := openStore(t, path, true)
	_, err := app.Start(ctx, st, app.Config{BaseURL: apptest.BaseURL, Version: "test", MasterKey: apptest.MasterKey(),
		AdminAPIKey: apptest.APIKey, Logger: apptest.Logger(t)})
	if err == nil || !strings.Contains(err.Error(), "behind") {
		t.Fatalf("start under auto on a database behind: %v", err)
	}
}
