package ldapfed_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/ldapfed"
)

// An entry renamed in the directory keeps its user: the link follows its
// DN, and the next sync finds nothing to write.
func TestSyncMovedEntry(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	p := createProvider(t, s, directoryProvider("corp", d))
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 2, created: 2})
	ann := realmUser(t, s, "ann")

	d.Modify("dn: uid=ann," + d.PeopleDN + "\nchangetype: modrdn\nnewrdn: cn=Ann Lee\ndeleteoldrdn: 0\n")
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 2, updated: 1})
	link, err := s.Store.GetFederationLink(context.Background(), s.Realm("acme").ID, ann.ID)
	if err != nil || link.DN != "cn=Ann Lee,"+d.PeopleDN {
		t.Fatalf("ann's link after the rename: %+v, %v", link, err)
	}
	if again := realmUser(t, s, "ann"); again.ID != ann.ID || !again.Enabled {
		t.Fatalf("ann after the rename: %+v", again)
	}
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 2})
}

// A full sync disables the users whose entry it did not meet, but not one
// made after it began: a sign-in imported that one meanwhile, maybe from
// an entry the search had passed.
func TestSyncSparesUsersMadeSinceItBegan(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	p := createProvider(t, s, directoryProvider("corp", d))
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 2, created: 2})
	d.Modify("dn: uid=bob," + d.PeopleDN + "\nchangetype: delete\n")

	bob := realmUser(t, s, "bob")
	began := time.UnixMilli(bob.CreatedAt - 1)
	run := func(now func() time.Time) *ldapfed.SyncResult {
		var core *identity.Core
		svc := ldapfed.New(ldapfed.Deps{Store: s.Store, Identity: func() *identity.Core { return core }, Log: apptest.Logger(t), Now: now})
		core = identity.New(identity.Deps{Store: s.Store, Sources: []identity.PasswordSource{svc}, Federation: svc})
		provider, err := s.Store.GetFederationProvider(context.Background(), s.Realm("acme").ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.RunSync(context.Background(), s.Realm("acme"), provider, ldapfed.ActionFull)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	mustCount(t, *run(func() time.Time { return began }), counts{read: 1})
	if u := realmUser(t, s, "bob"); u == nil || !u.Enabled {
		t.Fatalf("bob, made after the sync began: %+v", u)
	}
	mustCount(t, *run(time.Now), counts{read: 1, disabled: 1})
	if u := realmUser(t, s, "bob"); u == nil || u.Enabled {
		t.Fatalf("bob, gone from the directory: %+v", u)
	}
}

// Two entries with one ID: the first is the user, the second a failure,
// at every sync.
func TestSyncDuplicateIDs(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Lee", "bob@example.org", "pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	p := createProvider(t, s, with(directoryProvider("corp", d), "uuidLdapAttr", "sn"))
	for _, want := range []counts{{read: 2, created: 1, failed: 1}, {read: 2, failed: 1}} {
		res := syncNow(t, s, p.ID, "")
		mustCount(t, res, want)
		if f := res.Failures[0]; f.DN != "uid=bob,"+d.PeopleDN || !strings.Contains(f.Reason, "another entry has the same sn") {
			t.Fatalf("failure %+v", f)
		}
	}
	if realmUser(t, s, "ann") == nil || realmUser(t, s, "bob") != nil {
		t.Fatal("the wrong entry became the user")
	}
}
