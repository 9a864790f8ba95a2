package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
)

// idenplane --version and GET /admin/system/version tell the same build.
func TestCLIVersionMatchesSystemVersion(t *testing.T) {
	srv := cliStartServer(t, filepath.Join(t.TempDir(), "idenplane.db"), "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	var got struct {
		Version   string `json:"version"`
		Commit    string `json:"commit"`
		BuildDate string `json:"buildDate"`
	}
	if err := json.Unmarshal(srv.must(http.MethodGet, "/admin/system/version", cliAPIKey, nil, http.StatusOK), &got); err != nil {
		t.Fatal(err)
	}
	res := cliRun(t, t.TempDir(), cliEnv(), "", "--version")
	want := fmt.Sprintf("idenplane %s (commit %s, built %s)\n", got.Version, got.Commit, got.BuildDate)
	if res.code != 0 || res.stdout != want {
		t.Fatalf("--version printed %q, the endpoint says %q", res.stdout, want)
	}
}
