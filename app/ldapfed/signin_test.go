package ldapfed_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/store"
)

// signInEnv is a server with realm acme, a password-grant client, and a
// directory with ann and bob.
type signInEnv struct {
	t      *testing.T
	s      *apptest.Server
	d      *apptest.Directory
	secret string
}

func newSignInEnv(t *testing.T, realm map[string]any) *signInEnv {
	t.Helper()
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "bob-pw"))
	s := realapp.New(t)
	r := s.Admin(http.MethodPost, "/admin/realms", with(realm, "name", "acme"))
	apptest.MustStatus(t, r, http.StatusCreated)
	c := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli", "grantTypes": []string{"password"}})
	apptest.MustStatus(t, c, http.StatusCreated)
	return &signInEnv{t: t, s: s, d: d, secret: c.Object(t)["secret"].(string)}
}

// signIn asks for tokens with the password grant: the status and the
// error description, if any.
func (e *signInEnv) signIn(username, password string) (int, string) {
	e.t.Helper()
	r := e.tokens(username, password)
	if r.Status == http.StatusOK {
		return r.Status, ""
	}
	body := r.Object(e.t)
	desc, _ := body["error_description"].(string)
	return r.Status, desc
}

func (e *signInEnv) tokens(username, password string) *apptest.Response {
	e.t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {username}, "password": {password}}
	return e.s.Request(http.MethodPost, "/realms/acme/protocol/openid-connect/token", form.Encode(),
		"Content-Type: application/x-www-form-urlencoded",
		"Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("cli:"+e.secret)))
}

// accessToken signs in and answers the Authorization header of the
// user's access token.
func (e *signInEnv) accessToken(username, password string) string {
	e.t.Helper()
	r := e.tokens(username, password)
	apptest.MustStatus(e.t, r, http.StatusOK)
	return "Authorization: Bearer " + r.Object(e.t)["access_token"].(string)
}

func (e *signInEnv) mustSignIn(username, password string) {
	e.t.Helper()
	if status, desc := e.signIn(username, password); status != http.StatusOK {
		e.t.Fatalf("sign-in of %s: %d %s", username, status, desc)
	}
}

func (e *signInEnv) mustRefuse(username, password, want string) {
	e.t.Helper()
	if status, desc := e.signIn(username, password); status == http.StatusOK || !strings.Contains(desc, want) {
		e.t.Fatalf("sign-in of %s: %d %q, want a refusal with %q", username, status, desc, want)
	}
}

func (e *signInEnv) user(username string) *store.User {
	e.t.Helper()
	u, err := e.s.Store.GetUserByUsername(context.Background(), e.s.Realm("acme").ID, username)
	if err != nil {
		return nil
	}
	return u
}

func TestSignInImportsOnFirstSignIn(t *testing.T) {
	for _, mode := range []string{"IMPORT", "READ_ONLY"} {
		t.Run(mode, func(t *testing.T) {
			e := newSignInEnv(t, nil)
			p := createProvider(t, e.s, with(directoryProvider("corp", e.d), "syncMode", mode))
			if e.user("ann") != nil {
				t.Fatal("ann is local before her first sign-in")
			}
			e.mustSignIn("ann", "ann-pw")
			u := e.user("ann")
			if u == nil || u.Email != "ann@example.org" || u.FirstName != "Ann" || u.LastName != "Lee" || !u.EmailVerified ||
				!u.Enabled || u.PasswordHash != "" {
				t.Fatalf("imported user: %+v", u)
			}
			link, err := e.s.Store.GetFederationLink(context.Background(), u.RealmID, u.ID)
			if err != nil || link.ProviderID != p.ID || link.DN != "uid=ann,"+e.d.PeopleDN || len(link.ExternalID) != 36 {
				t.Fatalf("link: %+v, %v", link, err)
			}
			// Again by username and by email, as the same user.
			e.mustSignIn("ANN", "ann-pw")
			e.mustSignIn("ann@example.org", "ann-pw")
			if n, _ := e.s.Store.CountUsers(context.Background(), u.RealmID, store.UserFilter{}); n != 1 {
				t.Fatalf("%d users after three sign-ins", n)
			}
			e.mustRefuse("ann", "wrong", "invalid user credentials")
			e.mustRefuse("bob", "wrong", "invalid user credentials")
			e.mustRefuse("nobody", "ann-pw", "invalid user credentials")
			if e.user("bob") != nil || e.user("nobody") != nil {
				t.Fatal("a refused sign-in imported a user")
			}
		})
	}
}

// The directory's password is the only one: a change there shows at
// once, and the profile follows the entry.
func TestSignInFollowsTheDirectory(t *testing.T) {
	e := newSignInEnv(t, nil)
	createProvider(t, e.s, directoryProvider("corp", e.d))
	e.mustSignIn("ann", "ann-pw")
	e.d.Modify("dn: uid=ann," + e.d.PeopleDN + "\nchangetype: modify\nreplace: userPassword\nuserPassword: new-pw\n-\nreplace: mail\nmail: ann.lee@example.org\n")
	e.mustRefuse("ann", "ann-pw", "invalid user credentials")
	e.mustSignIn("ann", "new-pw")
	if u := e.user("ann"); u.Email != "ann.lee@example.org" {
		t.Fatalf("email after sign-in: %q", u.Email)
	}
	// The entry gone: the linked user cannot sign in, with no fallback.
	e.d.Modify("dn: uid=ann," + e.d.PeopleDN + "\nchangetype: delete\n")
	e.mustRefuse("ann", "new-pw", "invalid user credentials")
}

func TestSignInLockout(t *testing.T) {
	e := newSignInEnv(t, map[string]any{"bruteForceEnabled": true, "maxLoginFailures": 2})
	createProvider(t, e.s, directoryProvider("corp", e.d))
	e.mustSignIn("ann", "ann-pw")
	e.mustRefuse("ann", "wrong", "invalid user credentials")
	e.mustRefuse("ann", "wrong", "invalid user credentials")
	// Locked: the right password is refused as a wrong one.
	e.mustRefuse("ann", "ann-pw", "invalid user credentials")
	r := e.s.Admin(http.MethodGet, "/admin/realms/acme/brute-force/locked-users", nil)
	apptest.MustStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), e.user("ann").ID) {
		t.Fatalf("ann is not among the locked users: %s", r.Body)
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/acme/brute-force/users/"+e.user("ann").ID+"/unlock", nil), http.StatusNoContent)
	e.mustSignIn("ann", "ann-pw")
	// A disabled linked user is refused too.
	e.mustSignIn("bob", "bob-pw")
	bob := e.user("bob")
	apptest.MustStatus(t, e.s.Admin(http.MethodPut, "/admin/realms/acme/users/"+bob.ID, map[string]any{"enabled": false}), http.StatusOK)
	e.mustRefuse("bob", "bob-pw", "account disabled")
}

// Filter metacharacters in a login are escaped: they match nothing, and
// never another user's entry.
func TestSignInFilterInjection(t *testing.T) {
	e := newSignInEnv(t, nil)
	createProvider(t, e.s, directoryProvider("corp", e.d))
	for _, login := range []string{"*", "a*", "ann)(uid=*", "*)(|(uid=*", "ann)(|(objectClass=*)", `ann\2a`, "ann\x00", "(uid=ann)", "*@example.org"} {
		if status, _ := e.signIn(login, "ann-pw"); status == http.StatusOK {
			t.Errorf("login %q signed in", login)
		}
	}
	if n, _ := e.s.Store.CountUsers(context.Background(), e.s.Realm("acme").ID, store.UserFilter{}); n != 0 {
		t.Fatalf("%d users imported by injection attempts", n)
	}
}

func TestSignInPriority(t *testing.T) {
	e := newSignInEnv(t, nil)
	other := apptest.StartDirectory(t, apptest.Person("ann", "Other", "Ann", "other.ann@example.org", "other-pw"))
	createProvider(t, e.s, with(directoryProvider("second", e.d), "priority", 2))
	first := createProvider(t, e.s, with(directoryProvider("first", other), "priority", 1))
	// The first provider has ann: its password decides, the second is not asked.
	e.mustRefuse("ann", "ann-pw", "invalid user credentials")
	e.mustSignIn("ann", "other-pw")
	u := e.user("ann")
	if link, _ := e.s.Store.GetFederationLink(context.Background(), u.RealmID, u.ID); link.ProviderID != first.ID || u.FirstName != "Other" {
		t.Fatalf("ann from %+v: %+v", link, u)
	}
	// Only the first has no bob: the second is asked.
	e.mustSignIn("bob", "bob-pw")
	// A disabled provider is asked by nobody.
	apptest.MustStatus(t, e.s.Admin(http.MethodPatch, fedPath+"/"+first.ID, map[string]any{"enabled": false}), http.StatusOK)
	e.mustRefuse("ann", "other-pw", "invalid user credentials")
}

// A directory that stops, or hangs, fails the sign-in with a clear
// message within its timeout: no hang, no stale password.
func TestSignInDirectoryDown(t *testing.T) {
	e := newSignInEnv(t, nil)
	createProvider(t, e.s, directoryProvider("corp", e.d))
	e.mustSignIn("ann", "ann-pw")
	e.d.Stop()
	status, desc := e.signIn("ann", "ann-pw")
	if status != http.StatusServiceUnavailable || !strings.Contains(desc, "user directory is unavailable") {
		t.Fatalf("linked user, directory stopped: %d %q", status, desc)
	}
	status, desc = e.signIn("bob", "bob-pw")
	if status != http.StatusServiceUnavailable || !strings.Contains(desc, "user directory is unavailable") {
		t.Fatalf("new user, directory stopped: %d %q", status, desc)
	}
	e.d.Restart()
	e.mustSignIn("ann", "ann-pw")

	hung := createProvider(t, e.s, with(directoryProvider("hung", e.d), "connectionUrl", "ldap://"+hungListener(t),
		"priority", -1, "connectionTimeout", 500, "readTimeout", 500))
	start := time.Now()
	status, desc = e.signIn("bob", "bob-pw")
	if status != http.StatusServiceUnavailable || !strings.Contains(desc, "did not answer in time") {
		t.Fatalf("hung directory: %d %q", status, desc)
	}
	// Bounded by the provider's timeouts (1s), with room for a slow machine.
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the sign-in waited %v on a hung directory", took)
	}
	apptest.MustStatus(t, e.s.Admin(http.MethodDelete, fedPath+"/"+hung.ID, nil), http.StatusNoContent)
	e.mustSignIn("bob", "bob-pw")
}

// Deleting a provider deletes the users imported from it.
func TestDeleteProviderDeletesItsUsers(t *testing.T) {
	e := newSignInEnv(t, nil)
	p := createProvider(t, e.s, directoryProvider("corp", e.d))
	e.mustSignIn("ann", "ann-pw")
	e.s.CreateUser("acme", map[string]any{"username": "local"})
	apptest.MustStatus(t, e.s.Admin(http.MethodDelete, fedPath+"/"+p.ID, nil), http.StatusNoContent)
	if e.user("ann") != nil || e.user("local") == nil {
		t.Fatal("deleting the provider did not delete just its users")
	}
}

// The realm export carries the users' links to their entries, and an
// import (a copy too) links them to the file's providers.
func TestExportImportKeepsLinks(t *testing.T) {
	e := newSignInEnv(t, nil)
	createProvider(t, e.s, directoryProvider("corp", e.d))
	e.mustSignIn("ann", "ann-pw")
	exp := e.s.Admin(http.MethodGet, "/admin/realms/acme/export?includeUsers=true&includeSecrets=true", nil)
	apptest.MustStatus(t, exp, http.StatusOK)
	if !strings.Contains(string(exp.Body), `"federationLink"`) {
		t.Fatalf("no link in the export: %s", exp.Body)
	}
	body := strings.Replace(string(exp.Body), `"name": "acme"`, `"name": "copy"`, 1)
	apptest.MustStatus(t, e.s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", body), http.StatusCreated)
	copyRealm := e.s.Realm("copy")
	ann, err := e.s.Store.GetUserByUsername(context.Background(), copyRealm.ID, "ann")
	if err != nil {
		t.Fatal(err)
	}
	link, err := e.s.Store.GetFederationLink(context.Background(), copyRealm.ID, ann.ID)
	providers, _ := e.s.Store.ListFederationProviders(context.Background(), copyRealm.ID)
	if err != nil || len(providers) != 1 || link.ProviderID != providers[0].ID || link.DN != apptest.PersonDN("ann") {
		t.Fatalf("copy's link %+v, %v; providers %+v", link, err, providers)
	}
	bad := strings.Replace(body, `"name": "copy"`, `"name": "bad"`, 1)
	bad = strings.Replace(bad, `"providerId": "`, `"providerId": "0`, 1)
	apptest.MustError(t, e.s.Admin(http.MethodPost, "/admin/realms/import?asCopy=true", bad), http.StatusBadRequest,
		"invalid_field", "users[0].federationLink.providerId")
}

// The realm's second-factor policy holds for a directory's user as for a
// local one.
func TestSignInSecondFactorPolicy(t *testing.T) {
	e := newSignInEnv(t, map[string]any{"mfaRequired": true})
	createProvider(t, e.s, directoryProvider("corp", e.d))
	e.s.CreateUser("acme", map[string]any{"username": "local", "password": "a long local password 1"})
	localStatus, localDesc := e.signIn("local", "a long local password 1")
	status, desc := e.signIn("ann", "ann-pw")
	if status == http.StatusOK || status != localStatus || desc != localDesc {
		t.Fatalf("directory user: %d %q; local user: %d %q", status, desc, localStatus, localDesc)
	}
	if e.user("ann") == nil {
		t.Fatal("the right password did not import ann")
	}
}

// Two first sign-ins of the same user at once import one user.
func TestSignInConcurrentFirstSignIns(t *testing.T) {
	e := newSignInEnv(t, nil)
	createProvider(t, e.s, directoryProvider("corp", e.d))
	const n = 4
	statuses := make(chan int, n)
	for range n {
		go func() {
			status, _ := e.signIn("ann", "ann-pw")
			statuses <- status
		}()
	}
	for range n {
		if status := <-statuses; status != http.StatusOK {
			t.Fatalf("a concurrent first sign-in: %d", status)
		}
	}
	if count, _ := e.s.Store.CountUsers(context.Background(), e.s.Realm("acme").ID, store.UserFilter{}); count != 1 {
		t.Fatalf("%d users after concurrent first sign-ins", count)
	}
}
