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

// An administrator's page: their sessions listed and ended, their grant
// refused at its fields and then changed, a new enrolment link shown once
// after a confirmation, and their deletion after one, each as the admin
// accounts' API stores it.
func TestConsoleAdminAccountPage(t *testing.T) {
	f := newFixture(t)
	c := f.newAdmin("ada")
	f.newAdmin("grace", "realm:read", "users:read") // signed in: one session
	var accounts []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/accounts", nil).Decode(t, &accounts)
	i := slices.IndexFunc(accounts, func(a map[string]any) bool { return a["username"] == "grace" })
	id := accounts[i]["id"].(string)
	page := "/console/accounts/" + id
	if !slices.Contains(c.get("/console/accounts").Links(t), f.base+page) {
		t.Fatal("the list does not link to grace's page")
	}
	body := string(c.get(page).Body)
	if !strings.Contains(body, "The sign-in sessions of grace") || !strings.Contains(body, "otp") {
		t.Fatalf("grace's session is not listed: %s", body)
	}

	p := c.submit(page, page, map[string]string{"permissions": "realm:read\nno:such", "realm": "acme"})
	if p.Status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="permissions"[^>]*aria-invalid="true"`).Match(p.Body) {
		t.Fatalf("an unknown permission: %d %s", p.Status, p.Body)
	}
	p = c.submit(page, page, map[string]string{"permissions": "realm:read", "realm": "nowhere"})
	if p.Status != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="realm"[^>]*aria-invalid="true"`).Match(p.Body) ||
		!strings.Contains(string(p.Body), `no realm &#34;nowhere&#34;`) {
		t.Fatalf("an unknown realm: %d %s", p.Status, p.Body)
	}
	p = c.submit(page, page, map[string]string{"permissions": "realm:read\nusers:read\nusers:write", "realm": "acme"})
	if loc := p.Location(t); loc.Path != page || !slices.Equal(loc.Query()["done"], []string{"changed:permissions", "changed:realm"}) {
		t.Fatalf("after the change: %d %s", p.Status, loc)
	}
	grace := f.api("/admin/accounts/" + id)
	if perms, _ := grace["permissions"].([]any); len(perms) != 3 || grace["realm"] != "acme" {
		t.Fatalf("grace as stored: %v", grace)
	}

	p = c.submit(page, page+"/logout", nil)
	if loc := p.Location(t); loc.Query().Get("done") != "console.done.sessionsEnded" {
		t.Fatalf("after ending grace's sessions: %s", loc)
	}
	var sessions []map[string]any
	f.srv.Admin(http.MethodGet, "/admin/accounts/"+id+"/sessions", nil).Decode(t, &sessions)
	if len(sessions) != 0 {
		t.Fatalf("grace's sessions left: %v", sessions)
	}

	if confirm := string(c.get(page + "/enrolment").Body); !strings.Contains(confirm, "The earlier link stops working") {
		t.Fatalf("the enrolment's confirmation: %s", confirm)
	}
	p = c.submit(page+"/enrolment", page+"/enrolment", nil)
	m := regexp.MustCompile(`id="client-secret" value="([^"]+)"`).FindSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil || !strings.Contains(string(m[1]), "/realms/idenplane-admin/reset-password?token=") {
		t.Fatalf("the new enrolment link is not shown: %d %s", p.Status, p.Body)
	}

	if confirm := string(c.get(page + "/delete").Body); !strings.Contains(confirm, "Delete the administrator grace?") {
		t.Fatalf("the deletion's confirmation: %s", confirm)
	}
	p = c.submit(page+"/delete", page+"/delete", nil)
	if loc := p.Location(t); loc.Path != "/console/accounts" || loc.Query().Get("done") != "console.done.accountDeleted" {
		t.Fatalf("after the deletion: %d %s", p.Status, loc)
	}
	if r := f.srv.Admin(http.MethodGet, "/admin/accounts/"+id, nil); r.Status != http.StatusNotFound {
		t.Fatalf("grace after the deletion: %d %s", r.Status, r.Body)
	}
}
