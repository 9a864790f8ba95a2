package main

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// TestCLINHIUsesWrittenAtShutdown: the uses of an identity's credential
// are written behind the requests; a server stopped with SIGTERM right
// after them writes every one it answered before it exits.
func TestCLINHIUsesWrittenAtShutdown(t *testing.T) {
	db := t.TempDir() + "/uses.db"
	s := cliStartServer(t, db, "IDENPLANE_ADMIN_API_KEY="+cliAPIKey)
	s.must(http.MethodPost, "/admin/realms", cliAPIKey, map[string]any{"name": "acme"}, http.StatusCreated)
	var n struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(s.must(http.MethodPost, "/admin/realms/acme/nhi", cliAPIKey,
		map[string]any{"kind": "workload", "name": "worker"}, http.StatusCreated), &n); err != nil {
		t.Fatal(err)
	}
	var cred struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(s.must(http.MethodPost, "/admin/realms/acme/nhi/"+n.ID+"/credentials", cliAPIKey,
		map[string]any{"type": "client_secret"}, http.StatusCreated), &cred); err != nil {
		t.Fatal(err)
	}
	const grants = 40
	for range grants {
		if status, body := s.oidcPost("acme", "token", "worker", cred.Secret,
			url.Values{"grant_type": {"client_credentials"}}); status != http.StatusOK {
			t.Fatalf("grant: %d %s", status, body)
		}
	}
	s.stopGracefully()

	conn, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var audited, tokens int
	if err := conn.QueryRow("SELECT count(*) FROM nhi_audit_logs WHERE nhi_id = ? AND action = 'CREDENTIAL_USE'", n.ID).
		Scan(&audited); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow("SELECT coalesce(sum(tokens), 0) FROM nhi_usage WHERE nhi_id = ?", n.ID).Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	if audited != grants || tokens != grants {
		t.Fatalf("after a clean stop: %d uses audited and %d tokens counted, want %d of each", audited, tokens, grants)
	}
}
