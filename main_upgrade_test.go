package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/upgrade"
	"github.com/idenplane/idenplane/store"
)

// serve --upgrade=manual on a database of the schema before this binary's:
// the server waits read-only, upgrades on request, and a rollback puts the
// snapshot back and ends the process, for the older binary to start.
func TestCLIUpgradeManual(t *testing.T) {
	last := strings.LastIndex(schema, "\n-- version ")
	older := schema[:last+1]
	dir := t.TempDir()
	db := filepath.Join(dir, "idenplane.db")
	key := cliMasterKey(t)
	keyBytes, err := (&config{masterKeyEnv: key}).masterKeyFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	old, err := store.Open(context.Background(), store.Config{Path: db, Schema: older, MasterKey: keyBytes})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := old.SchemaVersion(context.Background())
	old.Close()

	s := cliStartServer(t, db, "IDENPLANE_UPGRADE=manual", "IDENPLANE_MASTER_KEY="+key, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	s.must(http.MethodGet, "/admin/realms", cliAPIKey, nil, http.StatusServiceUnavailable)
	s.must(http.MethodGet, "/health/ready", "", nil, http.StatusServiceUnavailable)
	var status upgrade.Status
	if err := json.Unmarshal(s.must(http.MethodGet, "/admin/upgrade/status", cliAPIKey, nil, http.StatusOK), &status); err != nil {
		t.Fatal(err)
	}
	if status.State != upgrade.StatePending || status.SchemaVersion != base {
		t.Fatalf("status %+v", status)
	}
	s.must(http.MethodPost, "/admin/upgrade", cliAPIKey, map[string]any{"targetVersion": status.BinarySchemaVersion}, http.StatusCreated)
	s.must(http.MethodGet, "/health/ready", "", nil, http.StatusOK)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "beta"}, http.StatusCreated)
	s.must(http.MethodPost, "/admin/upgrade/rollback", cliAPIKey, nil, http.StatusOK)
	if code := s.waitExit().ExitCode(); code != 0 {
		t.Fatalf("exit code %d after the rollback, want 0; stderr:\n%s", code, s.stderr)
	}

	back, err := store.Open(context.Background(), store.Config{Path: db, Schema: older, MasterKey: keyBytes, Lock: true})
	if err != nil {
		t.Fatalf("the older schema does not open the rolled-back database: %v", err)
	}
	defer back.Close()
	if v, _ := back.SchemaVersion(context.Background()); v != base {
		t.Errorf("schema version %d after the rollback, want %d", v, base)
	}
	if _, err := back.GetRealm(context.Background(), "beta"); err == nil {
		t.Error("the realm written after the upgrade outlived the rollback")
	}
	history, err := os.ReadFile(upgrade.HistoryPath(db))
	if err != nil || !strings.Contains(string(history), `"action":"rollback","outcome":"succeeded"`) {
		t.Errorf("history file %s (%v)", history, err)
	}
}
