package broker_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// A GitHub-shaped provider (no ID token): the profile comes from /user,
// the email from /user/emails, the primary verified one.
func TestBrokerGitHub(t *testing.T) {
	f := newFakeUpstream(t)
	f.set(func(f *fakeUpstream) {
		f.user = map[string]any{"id": 583231, "login": "Octocat", "name": "Mona Octocat", "email": "public@example.test"}
		f.emails = []map[string]any{
			{"email": "old@example.test", "primary": false, "verified": true},
			{"email": "mona@example.test", "primary": true, "verified": true},
		}
	})
	e := newFakeEnv(t, f, map[string]any{"providerType": "github", "issuer": nil, "jwksUrl": nil,
		"userinfoUrl": f.srv.URL + "/user", "trustEmail": true})
	claims := e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	user := e.acmeUser("octocat")
	if claims["sub"] != user["id"] || user["email"] != "mona@example.test" || user["emailVerified"] != true ||
		user["firstName"] != "Mona Octocat" {
		t.Fatalf("user %v, claims %v", user, claims)
	}
	links, err := e.s.Store.ListFederatedIdentities(context.Background(), e.s.Realm("acme").ID, user["id"].(string))
	if err != nil || len(links) != 1 || links[0].Subject != "583231" || links[0].Username != "octocat" {
		t.Fatalf("links %+v %v", links, err)
	}
	if last := f.seen[len(f.seen)-1]; last.Get("nonce") != "" || last.Get("scope") != "read:user user:email" ||
		last.Get("code_challenge_method") != "S256" {
		t.Fatalf("authorization request to GitHub %v", last)
	}
}

// A local account with the upstream's email: without trustEmail the
// person confirms with the account's password, and a wrong one links
// nothing; with trustEmail and a verified email the link is made at once.
func TestBrokerExistingEmail(t *testing.T) {
	t.Run("confirmed with the password", func(t *testing.T) {
		f := newFakeUpstream(t)
		e := newFakeEnv(t, f, nil)
		local := e.s.CreateUser("acme", map[string]any{"username": "robert", "email": "bob@example.test",
			"password": localPassword})
		b := apptest.NewBrowser(t)
		p := e.fakeSignIn(b)
		if p.Status != http.StatusOK || !strings.Contains(string(p.Body), "robert") || !strings.Contains(p.URL.Path, "/broker/corp/link") {
			t.Fatalf("expected the link page, got %d at %s: %s", p.Status, p.URL, p.Body)
		}
		mustFormsLeave(t, p)
		form := p.Forms(t)[0]
		wrong := b.Submit(form, map[string]string{"password": "not it"})
		if wrong.Status != http.StatusUnauthorized || !strings.Contains(string(wrong.Body), "Invalid username or password") {
			t.Fatalf("wrong password: %d %s", wrong.Status, wrong.Body)
		}
		if links, _ := e.s.Store.ListFederatedIdentities(context.Background(), e.s.Realm("acme").ID, local["id"].(string)); len(links) != 0 {
			t.Fatalf("linked after a wrong password: %+v", links)
		}
		// Another browser cannot use the link page.
		e.mustErrorPage(apptest.NewBrowser(t).Get(p.URL.String()), http.StatusForbidden, "another browser")
		claims := e.mustReachApp(b.Follow(b.Submit(wrong.Forms(t)[0], map[string]string{"password": localPassword}), e.base))
		if claims["sub"] != local["id"] {
			t.Fatalf("signed in as %v, want %v", claims["sub"], local["id"])
		}
		amr, _ := claims["amr"].([]any)
		if !slices.Contains(amr, any("fed")) || !slices.Contains(amr, any("pwd")) {
			t.Fatalf("amr %v", amr)
		}
		if evs := e.events("IDENTITY_PROVIDER_LINK_ACCOUNT"); len(evs) != 1 || evs[0]["userId"] != local["id"] {
			t.Fatalf("link events %v", evs)
		}
		// The confirmation is used up; the next sign-in goes by the link.
		if again := b.Submit(wrong.Forms(t)[0], map[string]string{"password": localPassword}); again.Status != http.StatusBadRequest {
			t.Fatalf("a second confirmation: %d", again.Status)
		}
		if claims := e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t))); claims["sub"] != local["id"] {
			t.Fatalf("later sign-in as %v", claims["sub"])
		}
	})
	t.Run("trusted and verified", func(t *testing.T) {
		f := newFakeUpstream(t)
		e := newFakeEnv(t, f, map[string]any{"trustEmail": true})
		local := e.s.CreateUser("acme", map[string]any{"username": "robert", "email": "bob@example.test"})
		if claims := e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t))); claims["sub"] != local["id"] {
			t.Fatalf("signed in as %v, want %v", claims["sub"], local["id"])
		}
		if evs := e.events("FEDERATED_IDENTITY_LINK"); len(evs) != 1 {
			t.Fatalf("link events %v", evs)
		}
	})
	t.Run("trusted but not verified upstream", func(t *testing.T) {
		f := newFakeUpstream(t)
		f.set(func(f *fakeUpstream) { f.claims = func(c map[string]any) { c["email_verified"] = false } })
		e := newFakeEnv(t, f, map[string]any{"trustEmail": true})
		e.s.CreateUser("acme", map[string]any{"username": "robert", "email": "bob@example.test", "password": localPassword})
		if p := e.fakeSignIn(apptest.NewBrowser(t)); p.Status != http.StatusOK || !strings.Contains(p.URL.Path, "/broker/corp/link") {
			t.Fatalf("expected the link page, got %d at %s", p.Status, p.URL)
		}
	})
}

// A disabled user stays out, whether found by the link or by email.
func TestBrokerDisabledUser(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, nil)
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	user := e.acmeUser("bob")
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/users/"+user["id"].(string),
		map[string]any{"enabled": false}), http.StatusOK)
	e.mustErrorPage(e.fakeSignIn(apptest.NewBrowser(t)), http.StatusForbidden, "disabled")
	e.mustLoginError("user_disabled")

	f2 := newFakeUpstream(t)
	e2 := newFakeEnv(t, f2, map[string]any{"trustEmail": true})
	e2.s.CreateUser("acme", map[string]any{"username": "robert", "email": "bob@example.test", "enabled": false})
	e2.mustErrorPage(e2.fakeSignIn(apptest.NewBrowser(t)), http.StatusForbidden, "disabled")
	e2.mustLoginError("user_disabled")
}

// The claim mapping: a custom username claim, attributes, upstream groups
// to realm roles; syncUserProfile updates names and email at each sign-in.
func TestBrokerClaimMappingAndSync(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, map[string]any{"syncUserProfile": true, "claimMapping": map[string]any{
		"username": "email", "attributes": map[string]any{"department": "dept"},
		"rolesClaim": "groups", "roles": map[string]any{"builders": "builder", "admins": "admin"}}})
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "builder"}), http.StatusCreated)
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/roles", map[string]any{"name": "admin"}), http.StatusCreated)
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	user := e.acmeUser("bob@example.test")
	id := user["id"].(string)
	r := e.s.Admin(http.MethodGet, "/admin/realms/acme/users/"+id+"/role-mappings/realm", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `"builder"`) || strings.Contains(string(r.Body), `"admin"`) {
		t.Fatalf("role mappings %s", r.Body)
	}
	attrs, err := e.s.Store.UserAttributes(context.Background(), id)
	if err != nil || attrs["department"] != "construction" {
		t.Fatalf("attributes %v %v", attrs, err)
	}

	f.set(func(f *fakeUpstream) {
		f.claims = func(c map[string]any) {
			c["given_name"], c["family_name"], c["email"] = "Robert", "Builder-Smith", "rob@example.test"
		}
	})
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	got := e.s.Admin(http.MethodGet, "/admin/realms/acme/users/"+id, nil).Object(t)
	if got["firstName"] != "Robert" || got["lastName"] != "Builder-Smith" || got["email"] != "rob@example.test" {
		t.Fatalf("after sync: %v", got)
	}
}
