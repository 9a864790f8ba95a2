package nhi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apptest"
)

const saPath = "/admin/realms/acme/service-accounts"

func TestServiceAccounts(t *testing.T) {
	s := newServer(t)
	r := s.Admin(http.MethodPost, saPath, map[string]any{"name": "deployer", "description": "deploys"})
	apptest.MustStatus(t, r, http.StatusCreated)
	var sa identityJSON
	r.Decode(t, &sa)
	if sa.Kind != "service" || sa.ClientID != "deployer" || sa.ServiceAccountUserID == "" || sa.State != "active" {
		t.Fatalf("service account %s", r.Body)
	}
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, saPath+"/"+sa.ID) {
		t.Errorf("Location %s", loc)
	}
	// It is an identity too; other kinds are no service accounts.
	if got := getIdentity(t, s, sa.ID); got.Name != "deployer" {
		t.Errorf("as an identity: %+v", got)
	}
	worker := createIdentity(t, s, map[string]any{"kind": "workload", "name": "worker"})
	var list []identityJSON
	s.Admin(http.MethodGet, saPath, nil).Decode(t, &list)
	if len(list) != 1 || list[0].ID != sa.ID {
		t.Errorf("service accounts %+v", list)
	}
	s.Admin(http.MethodGet, saPath+"?search=dep", nil).Decode(t, &list)
	if len(list) != 1 {
		t.Errorf("search %+v", list)
	}
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"another kind", http.MethodPost, saPath, map[string]any{"name": "x1", "kind": "bot"}, 400, "invalid_field", "kind"},
		{"no name", http.MethodPost, saPath, map[string]any{}, 400, "invalid_field", "name"},
		{"a taken name", http.MethodPost, saPath, map[string]any{"name": "worker"}, 409, "conflict", "name"},
		{"a workload through service accounts", http.MethodGet, saPath + "/" + worker.ID, nil, 404, "not_found", ""},
		{"its update", http.MethodPut, saPath + "/" + worker.ID, map[string]any{"description": "x"}, 404, "not_found", ""},
		{"its deletion", http.MethodDelete, saPath + "/" + worker.ID, nil, 404, "not_found", ""},
		{"its keys", http.MethodGet, saPath + "/" + worker.ID + "/api-keys", nil, 404, "not_found", ""},
		{"its metrics", http.MethodGet, saPath + "/" + worker.ID + "/metrics", nil, 404, "not_found", ""},
		{"an unknown one", http.MethodGet, saPath + "/" + uuid.NewString(), nil, 404, "not_found", ""},
		{"name is fixed", http.MethodPut, saPath + "/" + sa.ID, map[string]any{"name": "y"}, 400, "unknown_field", "name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(c.method, c.path, c.body), c.status, c.code, c.field)
		})
	}
	r = s.Admin(http.MethodPut, saPath+"/"+sa.ID, map[string]any{"description": "ships", "metadata": map[string]any{"repo": "infra"}})
	apptest.MustStatus(t, r, http.StatusOK)
	if got := getIdentity(t, s, sa.ID); got.Description != "ships" || got.Metadata["repo"] != "infra" {
		t.Errorf("after PUT %+v", got)
	}
	apptest.MustStatus(t, s.Admin(http.MethodDelete, saPath+"/"+sa.ID, nil), http.StatusNoContent)
	apptest.MustError(t, s.Admin(http.MethodGet, saPath+"/"+sa.ID, nil), 404, "not_found", "")
	apptest.MustStatus(t, s.Admin(http.MethodGet, "/admin/realms/acme/clients/deployer", nil), http.StatusNotFound)
}

func TestServiceAccountAPIKeys(t *testing.T) {
	clk := newClock()
	s := newServer(t, withClock(clk))
	r := s.Admin(http.MethodPost, saPath, map[string]any{"name": "deployer"})
	apptest.MustStatus(t, r, http.StatusCreated)
	id := r.Object(t)["id"].(string)
	keys := saPath + "/" + id + "/api-keys"

	r = s.Admin(http.MethodPost, keys, map[string]any{"name": "ci", "scopes": []string{"deploy"}, "expiresIn": 3600})
	apptest.MustStatus(t, r, http.StatusCreated)
	var key credentialJSON
	r.Decode(t, &key)
	if key.Type != "api_key" || !strings.HasPrefix(key.APIKey, "idp_"+key.Prefix+"_") || key.Name != "ci" {
		t.Fatalf("API key %s", r.Body)
	}
	if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, keys+"/"+key.ID) {
		t.Errorf("Location %s", loc)
	}
	// A client secret issued through the identity is no API key here.
	secret := issueCredential(t, s, id, map[string]any{"type": "client_secret"})
	r = s.Admin(http.MethodGet, keys, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []credentialJSON
	r.Decode(t, &list)
	if len(list) != 1 || list[0].ID != key.ID || list[0].APIKey != "" || list[0].Prefix != key.Prefix ||
		list[0].ExpiresTimestamp == nil || list[0].LastUsedTimestamp != nil || strings.Join(list[0].Scopes, ",") != "deploy" {
		t.Fatalf("API keys %s", r.Body)
	}
	for _, c := range []struct {
		name, path string
		body       any
		status     int
		code       string
		field      string
	}{
		{"another type", keys, map[string]any{"type": "client_secret"}, 400, "invalid_field", "type"},
		{"a secret revoked as a key", keys + "/" + secret.ID + "/revoke", nil, 404, "not_found", ""},
		{"a secret rotated as a key", keys + "/" + secret.ID + "/rotate", nil, 404, "not_found", ""},
		{"an unknown key", keys + "/" + uuid.NewString() + "/revoke", nil, 404, "not_found", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			apptest.MustError(t, s.Admin(http.MethodPost, c.path, c.body), c.status, c.code, c.field)
		})
	}
	r = s.Admin(http.MethodPost, keys+"/"+key.ID+"/rotate", map[string]any{"gracePeriod": 60})
	apptest.MustStatus(t, r, http.StatusCreated)
	var repl credentialJSON
	r.Decode(t, &repl)
	if repl.Replaces != key.ID || repl.APIKey == "" || strings.Join(repl.Scopes, ",") != "deploy" {
		t.Fatalf("rotated %s", r.Body)
	}
	r = s.Admin(http.MethodPost, keys+"/"+repl.ID+"/revoke", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if r.Object(t)["state"] != "revoked" {
		t.Errorf("revoked %s", r.Body)
	}
}

// An API key gets tokens; the metrics and the stats count them and the
// refusals.
func TestServiceAccountMetricsAndStats(t *testing.T) {
	e := newTokenEnv(t)
	r := e.s.Admin(http.MethodPost, saPath, map[string]any{"name": "deployer"})
	apptest.MustStatus(t, r, http.StatusCreated)
	id := r.Object(t)["id"].(string)
	r = e.s.Admin(http.MethodPost, saPath+"/"+id+"/api-keys", map[string]any{})
	apptest.MustStatus(t, r, http.StatusCreated)
	apiKey := r.Object(t)["apiKey"].(string)
	e.s.Admin(http.MethodPost, saPath+"/"+id+"/api-keys", map[string]any{"expiresIn": 1})

	e.mustToken(t, "deployer", apiKey)
	_, err := e.token("deployer", "wrong")
	mustRefuse(t, err, "invalid_client")
	e.clk.Advance(24 * time.Hour)
	e.mustToken(t, "deployer", apiKey)
	e.mustToken(t, "deployer", apiKey)

	r = e.s.Admin(http.MethodGet, saPath+"/"+id+"/metrics", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var m struct {
		Days, Requests, Tokens, Failures, Introspections int64
		LastUsedTimestamp                                *int64
	}
	r.Decode(t, &m)
	if m.Days != 30 || m.Tokens != 3 || m.Failures != 1 || m.Requests != 4 || m.LastUsedTimestamp == nil ||
		*m.LastUsedTimestamp != e.clk.Millis() {
		t.Errorf("metrics %s", r.Body)
	}
	r = e.s.Admin(http.MethodGet, saPath+"/"+id+"/metrics?days=1", nil)
	r.Decode(t, &m)
	if m.Tokens != 2 || m.Failures != 0 {
		t.Errorf("metrics of today %s", r.Body)
	}

	r = e.s.Admin(http.MethodGet, nhiPath+"/"+id+"/stats", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var st struct {
		Usage []struct {
			Date             string
			Tokens, Failures int64
		}
		Credentials map[string]int64
	}
	r.Decode(t, &st)
	if len(st.Usage) != 2 || st.Usage[0].Date != "2026-11-27" || st.Usage[0].Tokens != 1 || st.Usage[0].Failures != 1 ||
		st.Usage[1].Date != "2026-11-28" || st.Usage[1].Tokens != 2 {
		t.Errorf("stats usage %s", r.Body)
	}
	if st.Credentials["active"] != 1 || st.Credentials["expired"] != 1 || st.Credentials["revoked"] != 0 {
		t.Errorf("stats credentials %s", r.Body)
	}
	for _, q := range []string{"?days=0", "?days=367", "?days=x"} {
		apptest.MustError(t, e.s.Admin(http.MethodGet, nhiPath+"/"+id+"/stats"+q, nil), 400, "invalid_parameter", "days")
	}
	apptest.MustError(t, e.s.Admin(http.MethodGet, nhiPath+"/"+uuid.NewString()+"/stats", nil), 404, "not_found", "")
}
