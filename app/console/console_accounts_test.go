package console_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// An administrator makes another from the console: a refusal at its
// field, then the enrolment link shown once; disables them and ends their
// sessions, each through the admin accounts' API.
func TestConsoleAdminAccounts(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	if !slices.Contains(c.get("/console/").Links(t), f.base+"/console/accounts") {
		t.Fatal("the navigation has no link to the administrators")
	}
	const form = "/console/accounts/new"
	p := c.submit(form, form, map[string]string{"username": ""})
	if p.Status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="username"[^>]*aria-invalid="true"`).Match(p.Body) {
		t.Fatalf("no username: %d %s", p.Status, p.Body)
	}
	p = c.submit(form, form, map[string]string{"username": "grace", "email": "grace@example.test",
		"permissions": "realm:read\nusers:read"})
	m := regexp.MustCompile(`id="client-secret" value="([^"]+)"`).FindSubmatch(p.Body)
	if p.Status != http.StatusCreated || m == nil || !strings.HasPrefix(string(m[1]), f.base+"/") {
		t.Fatalf("the enrolment link is not shown: %d %s", p.Status, p.Body)
	}
	if !strings.Contains(string(p.Body), "enrolment link of grace") {
		t.Errorf("the page does not say whose link it is, once: %s", p.Body)
	}
	var accounts []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/accounts", nil).Decode(t, &accounts)
	i := slices.IndexFunc(accounts, func(a map[string]any) bool { return a["username"] == "grace" })
	if i < 0 {
		t.Fatalf("accounts %v, want grace", accounts)
	}
	grace := accounts[i]
	id := grace["id"].(string)
	if perms, _ := grace["permissions"].([]any); len(perms) != 2 || grace["email"] != "grace@example.test" || grace["enabled"] != true {
		t.Fatalf("grace as stored: %v", grace)
	}

	p = c.submit("/console/accounts", "/console/accounts/"+id+"/enabled", nil)
	if loc := p.Location(t); loc.Path != "/console/accounts" || loc.Query().Get("done") != "console.done.accountDisabled" {
		t.Fatalf("after disabling grace: %d %s", p.Status, p.Body)
	}
	if got := f.api("/admin/accounts/" + id)["enabled"]; got != false {
		t.Fatalf("grace's enabled after the console disabled her: %v", got)
	}
	p = c.submit("/console/accounts", "/console/accounts/"+id+"/enabled", nil)
	if loc := p.Location(t); loc.Query().Get("done") != "console.done.accountEnabled" || f.api("/admin/accounts/" + id)["enabled"] != true {
		t.Fatalf("after enabling grace again: %s", loc)
	}
	p = c.submit("/console/accounts", "/console/accounts/"+id+"/logout", nil)
	if loc := p.Location(t); loc.Path != "/console/accounts" || loc.Query().Get("done") != "console.done.sessionsEnded" {
		t.Fatalf("after ending grace's sessions: %d %s", p.Status, p.Body)
	}
}
