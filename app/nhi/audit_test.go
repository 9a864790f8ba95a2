package nhi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
)

type auditJSON struct {
	ID           string `json:"id"`
	Time         int64  `json:"time"`
	IdentityID   string `json:"identityId"`
	IdentityName string `json:"identityName"`
	CredentialID string `json:"credentialId"`
	Action       string `json:"action"`
	Actor        struct {
		Type, ID, Name string
	} `json:"actor"`
	IPAddress string `json:"ipAddress"`
	Details   string `json:"details"`
}

func auditLog(t *testing.T, s *apptest.Server, query string) []auditJSON {
	t.Helper()
	r := s.Admin(http.MethodGet, nhiPath+"/audit-logs"+query, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []auditJSON
	r.Decode(t, &list)
	return list
}

func actions(list []auditJSON) string {
	var out []string
	for _, a := range list {
		out = append(out, a.Action)
	}
	return strings.Join(out, " ")
}

// Every state change, credential issued, rotated, revoked and used, and
// every refusal is in the audit log, with who and from where.
func TestAuditLog(t *testing.T) {
	e := newTokenEnv(t)
	path := nhiPath + "/" + e.n.ID
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, path, map[string]any{"description": "d"}), http.StatusOK)
	sec := issueCredential(t, e.s, e.n.ID, map[string]any{"type": "client_secret"})
	e.mustToken(t, "billing-worker", sec.Secret)
	_, err := e.token("billing-worker", "wrong")
	mustRefuse(t, err, "invalid_client")
	r := e.s.Admin(http.MethodPost, path+"/credentials/"+sec.ID+"/rotate", map[string]any{"gracePeriod": 10})
	apptest.MustStatus(t, r, http.StatusCreated)
	repl := r.Object(t)["id"].(string)
	e.clk.Advance(time.Hour)
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/credentials/"+repl+"/revoke", nil), http.StatusOK)
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/suspend", nil), http.StatusOK)
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, path+"/decommission", nil), http.StatusOK)
	gone := createIdentity(t, e.s, map[string]any{"kind": "bot", "name": "gone"})
	apptest.MustStatus(t, e.s.Admin(http.MethodDelete, nhiPath+"/"+gone.ID, nil), http.StatusNoContent)

	all := auditLog(t, e.s, "")
	want := "DELETE CREATE DECOMMISSION SUSPEND CREDENTIAL_REVOKE CREDENTIAL_ROTATE AUTHENTICATION_REFUSED CREDENTIAL_USE CREDENTIAL_ISSUE UPDATE CREATE"
	if got := actions(all); got != want {
		t.Fatalf("audit log:\n got %s\nwant %s", got, want)
	}
	byAction := map[string]auditJSON{}
	for _, a := range all {
		byAction[a.Action] = a
	}
	if a := byAction["UPDATE"]; a.Actor.Type != "api-key" || a.IPAddress != "192.0.2.1" || a.IdentityName != "billing-worker" {
		t.Errorf("an admin's record %+v", a)
	}
	if a := byAction["CREDENTIAL_USE"]; a.Actor.Type != "identity" || a.Actor.ID != e.n.ID || a.CredentialID != sec.ID || a.IPAddress == "" {
		t.Errorf("a use %+v", a)
	}
	if a := byAction["AUTHENTICATION_REFUSED"]; a.Actor.Type != "identity" || a.Details == "" {
		t.Errorf("a refusal %+v", a)
	}
	if a := byAction["CREDENTIAL_ROTATE"]; a.CredentialID != repl || !strings.Contains(a.Details, sec.ID) {
		t.Errorf("a rotation %+v", a)
	}
	if a := byAction["DELETE"]; a.IdentityID != gone.ID || a.IdentityName != "gone" {
		t.Errorf("a deletion, whose identity is gone %+v", a)
	}

	for _, c := range []struct{ query, want string }{
		{"?identityId=" + gone.ID, "DELETE CREATE"},
		{"?action=credential_use", "CREDENTIAL_USE"},
		{"?credentialId=" + sec.ID, "CREDENTIAL_USE CREDENTIAL_ISSUE"},
		{"?actorId=" + e.n.ID, "AUTHENTICATION_REFUSED CREDENTIAL_USE"},
		{"?dateFrom=2026-11-28", ""},
		{"?dateTo=2026-11-26", ""},
		{"?dateFrom=2026-11-27T12:30:00Z", "DELETE CREATE DECOMMISSION SUSPEND CREDENTIAL_REVOKE"},
		{"?dateTo=2026-11-27T12:30:00Z&identityId=" + e.n.ID, "CREDENTIAL_ROTATE AUTHENTICATION_REFUSED CREDENTIAL_USE CREDENTIAL_ISSUE UPDATE CREATE"},
		{"?first=1&max=2", "CREATE DECOMMISSION"},
	} {
		if got := actions(auditLog(t, e.s, c.query)); got != c.want {
			t.Errorf("audit-logs%s: %q, want %q", c.query, got, c.want)
		}
	}
	for _, c := range []struct{ query, field string }{{"?action=nope", "action"}, {"?dateFrom=yesterday", "dateFrom"}, {"?max=x", "max"}} {
		apptest.MustError(t, e.s.Admin(http.MethodGet, nhiPath+"/audit-logs"+c.query, nil), 400, "invalid_parameter", c.field)
	}

	// Retention: delete what is older than a time, then the rest.
	apptest.MustError(t, e.s.Admin(http.MethodDelete, nhiPath+"/audit-logs?before=soon", nil), 400, "invalid_parameter", "before")
	r = e.s.Admin(http.MethodDelete, nhiPath+"/audit-logs?before=2026-11-27T12:30:00Z", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if r.Object(t)["deleted"] != float64(6) {
		t.Errorf("deleted %s", r.Body)
	}
	if got := actions(auditLog(t, e.s, "")); got != "DELETE CREATE DECOMMISSION SUSPEND CREDENTIAL_REVOKE" {
		t.Errorf("after retention %s", got)
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodDelete, nhiPath+"/audit-logs", nil), http.StatusOK)
	if got := auditLog(t, e.s, ""); len(got) != 0 {
		t.Errorf("after deleting all: %v", got)
	}
}
