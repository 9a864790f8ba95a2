package upgrade_test

import (
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/upgrade"
)

// POST /admin/upgrade takes this binary's schema version or its release,
// and refuses anything else saying what it may be, before anything is
// touched.
func TestUpgradeTarget(t *testing.T) {
	path, base := olderDatabase(t, 1)
	st := openStore(t, path, true)
	latest := st.LatestSchemaVersion()
	var shutdowns atomic.Int32
	s, _ := realapp.Start(t, st, path, manual(&shutdowns))
	for _, tc := range []struct {
		name string
		body any
		code string
	}{
		{"missing", map[string]any{}, "invalid_field"},
		{"null", map[string]any{"targetVersion": nil}, "invalid_field"},
		{"a later version", map[string]any{"targetVersion": latest + 1}, "invalid_field"},
		{"the database's own", map[string]any{"targetVersion": base}, "invalid_field"},
		{"another release", map[string]any{"targetVersion": "9.9.9"}, "invalid_field"},
		{"not a version", map[string]any{"targetVersion": true}, "invalid_field"},
		{"an unknown field", map[string]any{"targetVersion": latest, "force": true}, "unknown_field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Admin(http.MethodPost, "/admin/upgrade", tc.body)
			field := "targetVersion"
			if tc.code == "unknown_field" {
				field = "force"
			}
			apptest.MustError(t, r, http.StatusBadRequest, tc.code, field)
		})
	}
	if matches, _ := filepath.Glob(path + ".pre-upgrade-*"); len(matches) != 0 {
		t.Fatalf("a refused upgrade left a snapshot: %v", matches)
	}
	var status upgrade.Status
	if s.Admin(http.MethodGet, "/admin/upgrade/status", nil).Decode(t, &status); status.State != upgrade.StatePending {
		t.Fatalf("status after refusals %+v", status)
	}
	// The release, as the test server's version says it.
	r := s.Admin(http.MethodPost, "/admin/upgrade", map[string]any{"targetVersion": "test"})
	apptest.MustStatus(t, r, http.StatusCreated)
	var audit []upgrade.AuditEntry
	s.Admin(http.MethodGet, "/admin/upgrade/audit?max=100", nil).Decode(t, &audit)
	refused := 0
	for _, e := range audit {
		if e.Outcome == upgrade.OutcomeRefused {
			refused++
		}
	}
	if refused != 6 {
		t.Errorf("%d refusals in the audit, want the 6 that reached the upgrade (a body that does not decode is no request of one)", refused)
	}
}
