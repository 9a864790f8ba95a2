package upgrade_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/store"
	"github.com/idenplane/idenplane/store/pgtest"
)

// On PostgreSQL the endpoints answer what they can (status, pre-validation
// of the pending versions, health, history) and refuse clearly, with 501
// not_supported naming pg_dump, what takes a snapshot. Without PostgreSQL
// the test is skipped, and fails under CI=true (pgtest).
func TestPostgresAnswers(t *testing.T) {
	url := pgtest.Database(t)
	older, base := olderSchema(t, apptest.PostgresSchema(t))
	old, err := store.Open(ctx, store.Config{Path: url, Schema: apptest.Schema(t), PostgresSchema: older, MasterKey: apptest.MasterKey()})
	if err != nil {
		t.Fatalf("open the older database: %v", err)
	}
	fillOlder(t, old, 2)
	old.Close()
	st, err := store.Open(ctx, store.Config{Path: url, Schema: apptest.Schema(t), PostgresSchema: apptest.PostgresSchema(t),
		MasterKey: apptest.MasterKey(), DeferMigrations: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	latest := st.LatestSchemaVersion()
	var shutdowns atomic.Int32
	s, _ := realapp.Start(t, st, url, manual(&shutdowns))

	var status upgrade.Status
	s.Admin(http.MethodGet, "/admin/upgrade/status", nil).Decode(t, &status)
	if status.Backend != "postgres" || status.State != upgrade.StatePending || !status.ReadOnly || status.SchemaVersion != base {
		t.Errorf("status %+v", status)
	}
	mustUnavailable(t, s.Admin(http.MethodGet, "/admin/realms", nil), "a read while pending")

	var pv upgrade.PreValidation
	r := s.Admin(http.MethodGet, "/admin/upgrade/pre-validation", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	r.Decode(t, &pv)
	if !pv.Ready || len(pv.Pending) == 0 || pv.Pending[len(pv.Pending)-1].Version != latest || pv.Disk != nil ||
		checkNamed(pv.Checks, "integrity").Status != upgrade.CheckSkipped || checkNamed(pv.Checks, "disk-space").Status != upgrade.CheckSkipped {
		t.Errorf("pre-validation %s", r.Body)
	}
	var h upgrade.Health
	r = s.Admin(http.MethodGet, "/admin/upgrade/health", nil)
	apptest.MustStatus(t, r, http.StatusServiceUnavailable)
	if r.Decode(t, &h); checkNamed(h.Checks, "schema-version").Status != upgrade.CheckFailed ||
		checkNamed(h.Checks, "foreign-keys").Status != upgrade.CheckSkipped {
		t.Errorf("health %s", r.Body)
	}

	for _, rq := range []struct{ path, body string }{
		{"/admin/upgrade", `{"targetVersion":` + itoa(latest) + `}`},
		{"/admin/upgrade/rollback", ""},
	} {
		r := s.Admin(http.MethodPost, rq.path, rq.body)
		apptest.MustError(t, r, http.StatusNotImplemented, "not_supported", "")
		if !strings.Contains(r.Object(t)["error_description"].(string), "pg_dump") {
			t.Errorf("POST %s: %s", rq.path, r.Body)
		}
	}
	var c upgrade.Capability
	s.Admin(http.MethodGet, "/admin/upgrade/rollback/capability", nil).Decode(t, &c)
	if c.Available || !strings.Contains(c.Reason, "pg_dump") {
		t.Errorf("capability %+v", c)
	}
	for _, p := range []string{"/admin/upgrade/history", "/admin/upgrade/audit"} {
		r := s.Admin(http.MethodGet, p, nil)
		if apptest.MustStatus(t, r, http.StatusOK); strings.TrimSpace(string(r.Body)) != "[]" {
			t.Errorf("%s: %s, want [] (nothing is recorded beside a PostgreSQL database)", p, r.Body)
		}
	}
	if v, _ := st.SchemaVersion(ctx); v != base || shutdowns.Load() != 0 {
		t.Errorf("the refused requests changed something: version %d, shutdowns %d", v, shutdowns.Load())
	}
}
