package broker_test

import (
	"net/http"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// A client bound to no flow, in a realm with risk policies, signs in
// through its provider hint as before: the hint leads to the provider,
// whose callback passes the server's own flow, and the sign-in is
// assessed and decided. A policy denying the address refuses it.
func TestRiskBrokeredHint(t *testing.T) {
	e := newEnv(t, nil)
	policy := func(body map[string]any) {
		apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/risk-policies", body), http.StatusCreated)
	}
	policy(map[string]any{"name": "tell", "conditions": map[string]any{"levels": []string{"critical"}}, "action": "notify"})
	e.mustReachApp(e.signIn(apptest.NewBrowser(t), "alice", alicePassword))
	var list []map[string]any
	e.s.Admin(http.MethodGet, "/admin/realms/acme/risk-assessments", nil).Decode(t, &list)
	if len(list) != 1 || list[0]["kind"] != "oidc" || list[0]["clientId"] != "app" || list[0]["outcome"] != "succeeded" {
		t.Fatalf("assessments of the brokered sign-in: %v", list)
	}

	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/risk-settings",
		map[string]any{"denyList": []string{"127.0.0.0/8", "::1/128"}}), http.StatusOK)
	policy(map[string]any{"name": "no bad actors", "priority": -1, "conditions": map[string]any{"signals": []string{"ip_denylisted"}},
		"action": "deny"})
	e.mustErrorPage(e.signIn(apptest.NewBrowser(t), "alice", alicePassword), http.StatusForbidden, "looks unusual for this account")
	e.s.Admin(http.MethodGet, "/admin/realms/acme/risk-assessments?max=1", nil).Decode(t, &list)
	if len(list) != 1 || list[0]["action"] != "deny" || list[0]["outcome"] != "pending" {
		t.Fatalf("assessment of the denied sign-in: %v", list)
	}
}
