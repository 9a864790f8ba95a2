package ldapfed_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
)

func groupNames(t *testing.T, s *apptest.Server, username string) string {
	t.Helper()
	u := realmUser(t, s, username)
	if u == nil {
		t.Fatalf("no user %s", username)
	}
	groups, err := s.Store.ListUserGroups(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

func groupsDirectory(t *testing.T) *apptest.Directory {
	return apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "bob-pw")+apptest.Person("cy", "Cy", "Oh", "cy@example.org", "cy-pw")+
		apptest.Group("staff", apptest.PersonDN("ann"), apptest.PersonDN("bob"))+
		apptest.Group("admins", apptest.PersonDN("ann"), apptest.PersonDN("cy"))+
		apptest.Group("everyone", "cn=staff,ou=groups,"+apptest.DirectorySuffix, apptest.PersonDN("cy")))
}

func TestGroupMappingBySync(t *testing.T) {
	d := groupsDirectory(t)
	s := realapp.New(t)
	s.CreateRealm("acme")
	local := s.Admin(http.MethodPost, "/admin/realms/acme/groups", map[string]any{"name": "local"})
	apptest.MustStatus(t, local, http.StatusCreated)
	p := createProvider(t, s, with(directoryProvider("corp", d), "groupsDn", d.GroupsDN))
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 3, created: 3})
	for user, want := range map[string]string{"ann": "admins,staff", "bob": "staff", "cy": "admins,everyone"} {
		if got := groupNames(t, s, user); got != want {
			t.Errorf("%s in %q, want %q", user, got, want)
		}
	}
	ann := realmUser(t, s, "ann")
	apptest.MustStatus(t, s.Admin(http.MethodPut, "/admin/realms/acme/users/"+ann.ID+"/groups/"+local.Object(t)["id"].(string), nil),
		http.StatusOK)

	// Out of a group in the directory: out of it here; the realm's own group stays.
	d.Modify("dn: cn=admins,ou=groups," + apptest.DirectorySuffix + "\nchangetype: modify\ndelete: member\nmember: " + apptest.PersonDN("ann") + "\n")
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 3, updated: 1})
	if got := groupNames(t, s, "ann"); got != "local,staff" {
		t.Fatalf("ann after leaving admins: %q", got)
	}
	// Nested groups: the members of staff are in everyone too.
	apptest.MustStatus(t, s.Admin(http.MethodPatch, fedPath+"/"+p.ID, map[string]any{"nestedGroups": true}), http.StatusOK)
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 3, updated: 2})
	if ann, bob := groupNames(t, s, "ann"), groupNames(t, s, "bob"); ann != "everyone,local,staff" || bob != "everyone,staff" {
		t.Fatalf("nested: ann %q, bob %q", ann, bob)
	}
}

func TestGroupMappingAtSignIn(t *testing.T) {
	e := newSignInEnv(t, nil)
	e.d = groupsDirectory(t)
	p := createProvider(t, e.s, with(directoryProvider("corp", e.d), "groupsDn", e.d.GroupsDN, "nestedGroups", true))
	e.mustSignIn("ann", "ann-pw")
	if got := groupNames(t, e.s, "ann"); got != "admins,everyone,staff" {
		t.Fatalf("ann after her first sign-in: %q", got)
	}
	e.d.Modify("dn: cn=staff,ou=groups," + apptest.DirectorySuffix + "\nchangetype: modify\ndelete: member\nmember: " + apptest.PersonDN("ann") + "\n")
	e.mustSignIn("ann", "ann-pw")
	if got := groupNames(t, e.s, "ann"); got != "admins" {
		t.Fatalf("ann after leaving staff: %q", got)
	}
	// memberOf, kept by the directory's memberof overlay for groups added while it runs.
	e.d.Modify("dn: cn=ops,ou=groups," + apptest.DirectorySuffix + "\nchangetype: add\nobjectClass: groupOfNames\ncn: ops\nmember: " +
		apptest.PersonDN("bob") + "\n")
	apptest.MustStatus(t, e.s.Admin(http.MethodPatch, fedPath+"/"+p.ID, map[string]any{"groupsStrategy": "memberOf", "nestedGroups": false}),
		http.StatusOK)
	e.mustSignIn("bob", "bob-pw")
	if got := groupNames(t, e.s, "bob"); got != "ops" {
		t.Fatalf("bob by memberOf: %q", got)
	}
}

// groupOfUniqueNames (389 Directory Server's usual groups) lists its
// members in uniqueMember rather than member.
func TestGroupMappingUniqueNames(t *testing.T) {
	uniqueGroup := func(cn string, members ...string) string {
		var b strings.Builder
		b.WriteString("dn: cn=" + cn + ",ou=groups," + apptest.DirectorySuffix + "\nobjectClass: groupOfUniqueNames\ncn: " + cn + "\n")
		for _, m := range members {
			b.WriteString("uniqueMember: " + m + "\n")
		}
		b.WriteString("\n")
		return b.String()
	}
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "bob-pw")+
		uniqueGroup("staff", apptest.PersonDN("ann"), apptest.PersonDN("bob"))+
		uniqueGroup("admins", apptest.PersonDN("ann")))
	s := realapp.New(t)
	s.CreateRealm("acme")
	p := createProvider(t, s, with(directoryProvider("corp", d), "groupsDn", d.GroupsDN, "groupObjectClass", "groupOfUniqueNames"))
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 2, created: 2})
	for user, want := range map[string]string{"ann": "admins,staff", "bob": "staff"} {
		if got := groupNames(t, s, user); got != want {
			t.Errorf("%s in %q, want %q", user, got, want)
		}
	}
	d.Modify("dn: cn=staff,ou=groups," + apptest.DirectorySuffix + "\nchangetype: modify\ndelete: uniqueMember\nuniqueMember: " +
		apptest.PersonDN("bob") + "\n")
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 2, updated: 1})
	if got := groupNames(t, s, "bob"); got != "" {
		t.Fatalf("bob after leaving staff: %q", got)
	}
}

// A directory's group whose name the realm's group rules refuse is not
// made a group here: '/' separates the names of a group's path, so a
// group "sales/emea" would read as the subgroup emea of sales in tokens'
// groups claim and in the flows' group conditions.
func TestGroupMappingKeepsTheGroupRules(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "ann-pw")+
		apptest.Group("staff", apptest.PersonDN("ann"))+apptest.Group("sales/emea", apptest.PersonDN("ann")))
	s := realapp.New(t)
	s.CreateRealm("acme")
	p := createProvider(t, s, with(directoryProvider("corp", d), "groupsDn", d.GroupsDN))
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 1, created: 1})
	if got := groupNames(t, s, "ann"); got != "staff" {
		t.Fatalf("ann in %q, want only staff", got)
	}
	all, err := s.Store.ListGroups(context.Background(), realmUser(t, s, "ann").RealmID)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range all {
		if strings.Contains(g.Name, "/") {
			t.Errorf("group %q made from the directory", g.Name)
		}
	}
}
