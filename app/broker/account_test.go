package broker_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
)

// The account API lists the user's links and unlinks one, but never the
// last way to sign in.
func TestAccountLinkedAccountsAPI(t *testing.T) {
	f := newFakeUpstream(t)
	e := newFakeEnv(t, f, nil)
	createProvider(e.s, "acme", githubProvider("gh"))
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	bearer := "Authorization: Bearer " + e.accessToken
	r := e.s.Request(http.MethodGet, "/realms/acme/account/linked-accounts", nil, bearer)
	apptest.MustStatus(t, r, http.StatusOK)
	var list []map[string]any
	r.Decode(t, &list)
	if len(list) != 2 || list[0]["providerAlias"] != "corp" || list[0]["connected"] != true || list[0]["linkedUsername"] != "bob" ||
		list[1]["providerAlias"] != "gh" || list[1]["connected"] != false {
		t.Fatalf("linked accounts %s", r.Body)
	}
	// Bob has no password: corp is his only way in.
	apptest.MustError(t, e.s.Request(http.MethodDelete, "/realms/acme/account/linked-accounts/corp", nil, bearer), 409, "conflict", "")
	apptest.MustError(t, e.s.Request(http.MethodDelete, "/realms/acme/account/linked-accounts/gh", nil, bearer), 404, "not_found", "")
	id := e.acmeUser("bob")["id"].(string)
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/users/"+id+"/reset-password",
		map[string]any{"password": localPassword, "temporary": false}), http.StatusNoContent)
	// An admin's reset signs him out everywhere: he signs in again.
	apptest.MustError(t, e.s.Request(http.MethodGet, "/realms/acme/account/linked-accounts", nil, bearer), 401, "invalid_token", "")
	e.mustReachApp(e.fakeSignIn(apptest.NewBrowser(t)))
	bearer = "Authorization: Bearer " + e.accessToken
	apptest.MustStatus(t, e.s.Request(http.MethodDelete, "/realms/acme/account/linked-accounts/corp", nil, bearer), http.StatusNoContent)
	links, err := e.s.Store.ListFederatedIdentities(context.Background(), e.s.Realm("acme").ID, id)
	if err != nil || len(links) != 0 {
		t.Fatalf("links after unlink: %v %v", links, err)
	}
	if evs := e.events("REMOVE_FEDERATED_IDENTITY"); len(evs) != 1 || evs[0]["userId"] != id {
		t.Fatalf("events %v", evs)
	}
	apptest.MustStatus(t, e.s.Request(http.MethodGet, "/realms/acme/account/linked-accounts", nil), http.StatusUnauthorized)
}

// A person signed in to the account pages links an upstream account: the
// page's form, the upstream's sign-in, back to the page with the link.
func TestAccountLinksAnotherProvider(t *testing.T) {
	e := newEnv(t, nil)
	carol := e.s.CreateUser("acme", map[string]any{"username": "carol", "email": "carol@example.test", "password": localPassword})
	b := apptest.NewBrowser(t)
	login := b.Follow(b.Get(e.issuer("acme")+"/account/linked-accounts"), e.base)
	if login.Status != http.StatusOK {
		t.Fatalf("account sign-in page: %d at %s", login.Status, login.URL)
	}
	page := b.Follow(b.Submit(login.Forms(t)[0], map[string]string{"username": "carol", "password": localPassword}), e.base)
	if page.Status != http.StatusOK || !strings.Contains(string(page.Body), "Linked accounts") {
		t.Fatalf("expected the linked accounts page, got %d at %s: %s", page.Status, page.URL, page.Body)
	}
	var link *apptest.Form
	for _, f := range page.Forms(t) {
		if strings.HasSuffix(f.Action, "/linked-accounts/corp/link") {
			link = f
		}
	}
	if link == nil {
		t.Fatalf("no link form on %s", page.Body)
	}
	mustFormsLeave(t, page)
	up := b.Follow(b.Submit(link, nil), e.base)
	callback := e.upstreamSignIn(b, up, "alice", alicePassword)
	done := b.Follow(b.Get(callback.String()), e.base)
	if done.Status != http.StatusOK || !strings.Contains(string(done.Body), "The account is linked") ||
		!strings.Contains(string(done.Body), "Linked as alice") {
		t.Fatalf("after linking: %d at %s: %s", done.Status, done.URL, done.Body)
	}
	links, err := e.s.Store.ListFederatedIdentities(context.Background(), e.s.Realm("acme").ID, carol["id"].(string))
	if err != nil || len(links) != 1 || links[0].Username != "alice" {
		t.Fatalf("carol's links %+v %v", links, err)
	}
	// A sign-in through corp as alice is now carol's.
	if claims := e.mustReachApp(e.signIn(apptest.NewBrowser(t), "alice", alicePassword)); claims["sub"] != carol["id"] {
		t.Fatalf("signed in as %v, want carol", claims["sub"])
	}
	// Unlinking from the page: carol has a password, so she may.
	page = b.Follow(b.Get(e.issuer("acme")+"/account/linked-accounts"), e.base)
	var unlink *apptest.Form
	for _, f := range page.Forms(t) {
		if strings.HasSuffix(f.Action, "/linked-accounts/corp/delete") {
			unlink = f
		}
	}
	if unlink == nil {
		t.Fatalf("no unlink form on %s", page.Body)
	}
	if done := b.Follow(b.Submit(unlink, nil), e.base); !strings.Contains(string(done.Body), "The account is unlinked") {
		t.Fatalf("after unlinking: %d %s", done.Status, done.Body)
	}
}
