package upgrade_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/upgrade"
)

// Pre-validation on a healthy copy of a database and on a copy with a
// page of its users table overwritten: the damage is answered, checked
// and refused, never a 500.
func TestPreValidationFindsCorruption(t *testing.T) {
	healthy, base := olderDatabase(t, 200)
	damaged := filepath.Join(t.TempDir(), "idenplane.db")
	copyFile(t, healthy, damaged)
	corruptTable(t, damaged, "users")

	for _, tc := range []struct {
		name    string
		path    string
		ready   bool
		verdict upgrade.CheckStatus
	}{
		{"healthy copy", healthy, true, upgrade.CheckOK},
		{"corrupted copy", damaged, false, upgrade.CheckFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var shutdowns atomic.Int32
			s, _ := realapp.Start(t, openStore(t, tc.path, true), tc.path, manual(&shutdowns))
			var pv upgrade.PreValidation
			r := s.Admin(http.MethodGet, "/admin/upgrade/pre-validation", nil)
			apptest.MustStatus(t, r, http.StatusOK)
			r.Decode(t, &pv)
			integrity := checkNamed(pv.Checks, "integrity")
			if pv.Ready != tc.ready || integrity.Status != tc.verdict || pv.SchemaVersion != base || len(pv.Pending) == 0 {
				t.Fatalf("pre-validation %s", r.Body)
			}
			if !tc.ready {
				if len(integrity.Problems) == 0 || !strings.Contains(integrity.Detail, "damaged") {
					t.Errorf("integrity check without its problems: %+v", integrity)
				}
				refused := s.Admin(http.MethodPost, "/admin/upgrade", map[string]any{"targetVersion": pv.BinarySchemaVersion})
				apptest.MustError(t, refused, http.StatusConflict, "invalid_state", "")
				if !strings.Contains(refused.Object(t)["error_description"].(string), "integrity") {
					t.Errorf("the refused upgrade does not name the failed check: %s", refused.Body)
				}
				var h upgrade.Health
				r := s.Admin(http.MethodGet, "/admin/upgrade/health", nil)
				apptest.MustStatus(t, r, http.StatusServiceUnavailable)
				if r.Decode(t, &h); checkNamed(h.Checks, "integrity").Status != upgrade.CheckFailed {
					t.Errorf("health on the damaged file %s", r.Body)
				}
				if matches, _ := filepath.Glob(tc.path + ".pre-upgrade-*"); len(matches) != 0 {
					t.Errorf("a refused upgrade left a snapshot: %v", matches)
				}
			}
		})
	}
}
