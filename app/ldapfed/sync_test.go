package ldapfed_test

import (
	"context"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/ldapfed"
	"github.com/idenplane/idenplane/store"
)

func syncNow(t *testing.T, s *apptest.Server, id, action string) ldapfed.SyncResult {
	t.Helper()
	r := s.Admin(http.MethodPost, fedPath+"/"+id+"/sync"+action, nil)
	apptest.MustStatus(t, r, http.StatusOK)
	var res ldapfed.SyncResult
	r.Decode(t, &res)
	return res
}

type counts struct{ read, created, updated, disabled, deleted, failed int }

func mustCount(t *testing.T, res ldapfed.SyncResult, want counts) {
	t.Helper()
	got := counts{res.Read, res.Created, res.Updated, res.Disabled, res.Deleted, res.Failed}
	if got != want || res.Error != "" || len(res.Failures) != res.Failed {
		t.Fatalf("sync result %+v, want %+v", res, want)
	}
}

func realmUser(t *testing.T, s *apptest.Server, username string) *store.User {
	t.Helper()
	u, err := s.Store.GetUserByUsername(context.Background(), s.Realm("acme").ID, username)
	if err != nil {
		return nil
	}
	return u
}

func TestFullSync(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "pw")+apptest.Person("cy", "Cy", "Oh", "", "pw")+
		apptest.Person("dave", "Dave", "Taken", "dave@example.org", "pw")+
		apptest.Person("bad user", "Bad", "Name", "bad@example.org", "pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	s.CreateUser("acme", map[string]any{"username": "local-dave", "email": "dave@example.org"})
	p := createProvider(t, s, with(directoryProvider("corp", d), "pagination", 2))

	res := syncNow(t, s, p.ID, "")
	mustCount(t, res, counts{read: 5, created: 3, failed: 2})
	reasons := res.Failures[0].DN + " " + res.Failures[0].Reason + " | " + res.Failures[1].DN + " " + res.Failures[1].Reason
	if !strings.Contains(reasons, "uid=dave") || !strings.Contains(reasons, "email") || !strings.Contains(reasons, "uid=bad user") {
		t.Fatalf("failures: %s", reasons)
	}
	if ann := realmUser(t, s, "ann"); ann == nil || ann.Email != "ann@example.org" || ann.LastName != "Lee" {
		t.Fatalf("ann after sync: %+v", ann)
	}
	if cy := realmUser(t, s, "cy"); cy == nil || cy.Email != "" {
		t.Fatalf("cy after sync: %+v", cy)
	}
	// Nothing changed: nothing written.
	mustCount(t, syncNow(t, s, p.ID, "?action=full"), counts{read: 5, failed: 2})

	// cy is signed in: the sync's disable ends that, as every disable does.
	now := time.Now().UnixMilli()
	if err := s.Store.CreateSession(context.Background(), &store.Session{ID: "cy-sso", RealmID: s.Realm("acme").ID,
		UserID: realmUser(t, s, "cy").ID, Kind: store.SessionSSO, StartedAt: now, LastAccessAt: now, ExpiresAt: now + 3_600_000,
		AMR: []string{"pwd"}}); err != nil {
		t.Fatal(err)
	}
	d.Modify("dn: uid=bob," + d.PeopleDN + "\nchangetype: modify\nreplace: sn\nsn: Raymond\n\n" +
		"dn: uid=cy," + d.PeopleDN + "\nchangetype: delete\n")
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 4, updated: 1, disabled: 1, failed: 2})
	if bob := realmUser(t, s, "bob"); bob.LastName != "Raymond" {
		t.Fatalf("bob after sync: %+v", bob)
	}
	if cy := realmUser(t, s, "cy"); cy == nil || cy.Enabled {
		t.Fatalf("cy, gone from the directory: %+v", cy)
	}
	if live, err := s.Store.ListUserSessions(context.Background(), s.Realm("acme").ID, realmUser(t, s, "cy").ID, 0); err != nil || len(live) != 0 {
		t.Fatalf("cy's sessions after the sync disabled him: %d, %v; want none", len(live), err)
	}
	got := getProvider(t, s, p.ID)
	if last := got.SyncStatus.LastSync; last == nil || last.Updated != 1 || last.Disabled != 1 || last.Action != "full" || got.SyncStatus.Running != nil {
		t.Fatalf("sync status: %+v", got.SyncStatus)
	}

	// Deleting instead of disabling.
	apptest.MustStatus(t, s.Admin(http.MethodPatch, fedPath+"/"+p.ID, map[string]any{"missingUsers": "delete"}), http.StatusOK)
	d.Modify("dn: uid=bob," + d.PeopleDN + "\nchangetype: delete\n")
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 3, deleted: 2, failed: 2})
	if realmUser(t, s, "bob") != nil || realmUser(t, s, "cy") != nil || realmUser(t, s, "ann") == nil || realmUser(t, s, "local-dave") == nil {
		t.Fatal("delete of missing users deleted the wrong ones")
	}
}

func TestChangedSync(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "pw")+apptest.Person("cy", "Cy", "Oh", "cy@example.org", "pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	// A webhook that takes the syncs' ends: its outbox holds one for each.
	apptest.MustStatus(t, s.Admin(http.MethodPost, "/admin/realms/acme/webhooks",
		map[string]any{"url": "https://hooks.example.com/ldap", "events": []string{"ldap.*"}}), http.StatusCreated)
	p := createProvider(t, s, directoryProvider("corp", d))
	mustCount(t, syncNow(t, s, p.ID, "?action=full"), counts{read: 3, created: 3})
	due, err := s.Store.DueWebhookMessages(context.Background(), math.MaxInt64, 10)
	if err != nil || len(due) != 1 || len(due[0]) != 1 {
		t.Fatalf("the sync's events: %+v %v", due, err)
	}
	msgs := due[0]
	if msgs[0].EventType != "ldap.sync.finished" ||
		!strings.Contains(string(msgs[0].Payload), `"provider":"corp"`) || !strings.Contains(string(msgs[0].Payload), `"created":3`) {
		t.Fatalf("the sync's event: %+v", msgs[0])
	}
	d.Modify("dn: uid=ann," + d.PeopleDN + "\nchangetype: modify\nreplace: givenName\ngivenName: Anna\n\n" +
		"dn: uid=cy," + d.PeopleDN + "\nchangetype: modify\nreplace: mail\nmail: cy.oh@example.org\n\n" +
		"dn: uid=dee," + d.PeopleDN + "\nchangetype: add\nobjectClass: inetOrgPerson\nuid: dee\ncn: Dee\nsn: Dee\n")
	// Only the changed entries are read; a deletion is for a full sync to find.
	mustCount(t, syncNow(t, s, p.ID, "?action=changed"), counts{read: 3, created: 1, updated: 2})
	if ann, cy := realmUser(t, s, "ann"), realmUser(t, s, "cy"); ann.FirstName != "Anna" || cy.Email != "cy.oh@example.org" {
		t.Fatalf("after the changed sync: %+v %+v", ann, cy)
	}
	if last := getProvider(t, s, p.ID).SyncStatus.LastSync; last.Action != "changed" {
		t.Fatalf("last sync %+v", last)
	}
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath+"/"+p.ID+"/sync?action=partial", nil), http.StatusBadRequest,
		"invalid_parameter", "action")
}

func TestSyncFailures(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	p := createProvider(t, s, directoryProvider("corp", d))
	mustCount(t, syncNow(t, s, p.ID, ""), counts{read: 1, created: 1})

	// A directory that is down stops the sync; its users stay as they were.
	d.Stop()
	r := s.Admin(http.MethodPost, fedPath+"/"+p.ID+"/sync", nil)
	apptest.MustError(t, r, http.StatusServiceUnavailable, "unavailable", "")
	if last := getProvider(t, s, p.ID).SyncStatus.LastSync; last == nil || !strings.HasPrefix(last.Error, "unreachable") {
		t.Fatalf("last sync after a failure: %+v", last)
	}
	if ann := realmUser(t, s, "ann"); ann == nil || !ann.Enabled {
		t.Fatalf("a failed sync changed ann: %+v", ann)
	}

	// One sync at a time per provider: a second one while the first waits
	// on a hung directory is refused.
	hung := createProvider(t, s, with(directoryProvider("hung", d), "connectionUrl", "ldap://"+hungListener(t), "readTimeout", 3000))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Admin(http.MethodPost, fedPath+"/"+hung.ID+"/sync", nil)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for getProvider(t, s, hung.ID).SyncStatus.Running == nil {
		if time.Now().After(deadline) {
			t.Fatal("the first sync never showed as running")
		}
		time.Sleep(10 * time.Millisecond)
	}
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath+"/"+hung.ID+"/sync", nil), http.StatusConflict, "conflict", "")
	wg.Wait()
	if last := getProvider(t, s, hung.ID).SyncStatus.LastSync; last == nil || !strings.HasPrefix(last.Error, "timeout") {
		t.Fatalf("last sync of the hung directory: %+v", last)
	}

	apptest.MustStatus(t, s.Admin(http.MethodPatch, fedPath+"/"+p.ID, map[string]any{"importEnabled": false}), http.StatusOK)
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath+"/"+p.ID+"/sync", nil), http.StatusBadRequest, "invalid_request", "")
	apptest.MustStatus(t, s.Admin(http.MethodPatch, fedPath+"/"+p.ID, map[string]any{"importEnabled": true, "enabled": false}), http.StatusOK)
	apptest.MustError(t, s.Admin(http.MethodPost, fedPath+"/"+p.ID+"/sync", nil), http.StatusBadRequest, "invalid_request", "")
}
