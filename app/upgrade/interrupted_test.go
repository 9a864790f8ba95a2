package upgrade_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/upgrade"
)

// A server killed during an upgrade, before its snapshot was in place,
// and while appending to the history: the next start reads the upgrade as
// interrupted, has nothing to roll back, and upgrades again.
func TestInterruptedUpgrade(t *testing.T) {
	path, base := olderDatabase(t, 1)
	st := openStore(t, path, true)
	latest := st.LatestSchemaVersion()
	history := fmt.Sprintf(`{"timestamp":1767225600000,"actor":{"type":"api-key","name":"bootstrap"},"action":"upgrade",`+
		`"outcome":"started","upgradeId":"killed","fromVersion":%d,"toVersion":%d,"snapshot":%q}`+"\n"+`{"timestamp":17672`,
		base, latest, path+".pre-upgrade-killed.db")
	if err := os.WriteFile(upgrade.HistoryPath(path), []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}
	var shutdowns atomic.Int32
	s, _ := realapp.Start(t, st, path, manual(&shutdowns))

	var status upgrade.Status
	s.Admin(http.MethodGet, "/admin/upgrade/status", nil).Decode(t, &status)
	if status.LastUpgrade == nil || status.LastUpgrade.ID != "killed" || status.LastUpgrade.Status != upgrade.UpgradeInterrupted ||
		status.State != upgrade.StatePending {
		t.Fatalf("status %+v", status)
	}
	var c upgrade.Capability
	s.Admin(http.MethodGet, "/admin/upgrade/rollback/capability", nil).Decode(t, &c)
	if c.Available || !strings.Contains(c.Reason, "cut short") {
		t.Errorf("capability %+v", c)
	}
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/upgrade", map[string]any{"targetVersion": latest}), http.StatusCreated)
	var ups []upgrade.Upgrade
	s.Admin(http.MethodGet, "/admin/upgrade/history", nil).Decode(t, &ups)
	if len(ups) != 2 || ups[0].Status != upgrade.UpgradeSucceeded || ups[1].Status != upgrade.UpgradeInterrupted {
		t.Errorf("history %+v", ups)
	}
}
