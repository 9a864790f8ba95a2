package ldapfed_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/ldapfed"
)

// TestActiveDirectory runs the provider against a real Active Directory
// (Samba's), provisioned once for all its subtests.
func TestActiveDirectory(t *testing.T) {
	ann := apptest.ADUser{Name: "ann", GivenName: "Ann", Surname: "Lee", Mail: "ann@corp.example", Password: "Ann-Pass1!"}
	bob := apptest.ADUser{Name: "bob", GivenName: "Bob", Surname: "Ray", Mail: "bob@corp.example", Password: "Bob-Pass1!",
		Disabled: true}
	d := apptest.StartAD(t, []apptest.ADUser{ann, bob}, "WS1")
	s := realapp.New(t)
	s.CreateRealm("acme")
	provider := func(name, bindDN string) map[string]any {
		return map[string]any{"name": name, "providerType": "ldap", "vendor": "ad", "connectionUrl": d.URL,
			"bindDn": bindDN, "bindCredential": d.AdminPassword, "usersDn": d.UsersDN, "connectionTimeout": 5000,
			"readTimeout": 5000}
	}

	t.Run("bind names", func(t *testing.T) {
		for i, name := range []string{d.AdminDN, "Administrator@corp.example", d.Domain + `\Administrator`} {
			out := testConnection(t, s, provider(fmt.Sprint("bind ", i), name))
			if !out.Success || out.Vendor != "ad" {
				t.Errorf("test-connection bound as %q: %+v", name, out)
			}
			// The password counts with every form of the name.
			wrong := with(provider(fmt.Sprint("wrong ", i), name), "bindCredential", "Not-The-Pass1!")
			if out := testConnection(t, s, wrong); out.Success || out.Error != ldapfed.KindInvalidCredentials {
				t.Errorf("test-connection bound as %q with a wrong password: %+v", name, out)
			}
		}
	})

	// The full sync's start is the changed sync's bound, by the second:
	// the entries provisioned in the same second would count as changed.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	p := createProvider(t, s, provider("corp", d.Domain+`\Administrator`))

	t.Run("full sync", func(t *testing.T) {
		if p.UserLDAPFilter != "(!(objectClass=computer))" {
			t.Errorf("the ad preset's user filter: %q", p.UserLDAPFilter)
		}
		// Administrator, Guest, krbtgt and the provisioning's dns-dc1
		// besides ann and bob; not the computers DC1$ and WS1$ (those
		// live outside CN=Users too: search the whole domain).
		apptest.MustStatus(t, s.Admin(http.MethodPatch, fedPath+"/"+p.ID, map[string]any{"usersDn": d.BaseDN}), http.StatusOK)
		res := syncNow(t, s, p.ID, "?action=full")
		for _, computer := range []string{"dc1$", "ws1$"} {
			if u := realmUser(t, s, computer); u != nil {
				t.Errorf("computer account %s imported as a user, enabled %v", computer, u.Enabled)
			}
		}
		mustCount(t, res, counts{read: 6, created: 6})
		if u := realmUser(t, s, "ann"); u == nil || !u.Enabled || u.Email != ann.Mail || u.FirstName != "Ann" {
			t.Errorf("ann: %+v", u)
		}
		for _, name := range []string{"bob", "guest", "krbtgt"} {
			if u := realmUser(t, s, name); u == nil || u.Enabled {
				t.Errorf("%s, disabled in the directory: %+v", name, u)
			}
		}
	})

	t.Run("changed sync", func(t *testing.T) {
		time.Sleep(time.Second) // AD stamps whenChanged by the second
		d.Modify(d.UserDN(ann), map[string][]string{"givenName": {"Anna"}})
		d.Modify(d.UserDN(bob), map[string][]string{"userAccountControl": {"512"}})
		// Only the two changed entries are read.
		mustCount(t, syncNow(t, s, p.ID, "?action=changed"), counts{read: 2, updated: 2})
		if u := realmUser(t, s, "ann"); u.FirstName != "Anna" {
			t.Errorf("ann after the changed sync: %+v", u)
		}
		if u := realmUser(t, s, "bob"); !u.Enabled {
			t.Errorf("bob, enabled in the directory: %+v", u)
		}
	})

	t.Run("sign in", func(t *testing.T) {
		c := s.Admin(http.MethodPost, "/admin/realms/acme/clients", map[string]any{"clientId": "cli", "grantTypes": []string{"password"}})
		apptest.MustStatus(t, c, http.StatusCreated)
		e := &signInEnv{t: t, s: s, secret: c.Object(t)["secret"].(string)}
		e.mustSignIn("ann", ann.Password)
		e.mustRefuse("ann", bob.Password, "")
	})
}
