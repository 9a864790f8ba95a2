package ldapfed_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/idenplane/idenplane/app/apptest"
	"github.com/idenplane/idenplane/app/apptest/realapp"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/ldapfed"
)

// The periodic sync fires for a provider with a syncPeriod, and for no
// other, over the server's database.
func TestPeriodicSync(t *testing.T) {
	d := apptest.StartDirectory(t, apptest.Person("ann", "Ann", "Lee", "ann@example.org", "pw")+
		apptest.Person("bob", "Bob", "Ray", "bob@example.org", "pw"))
	s := realapp.New(t)
	s.CreateRealm("acme")
	s.CreateRealm("other")
	periodic := createProvider(t, s, with(directoryProvider("corp", d), "syncPeriod", 1))
	r := s.Admin(http.MethodPost, "/admin/realms/other/user-federation", directoryProvider("manual", d))
	apptest.MustStatus(t, r, http.StatusCreated)

	var core *identity.Core
	svc := ldapfed.New(ldapfed.Deps{Store: s.Store, Identity: func() *identity.Core { return core }, Log: apptest.Logger(t),
		SyncTick: 50 * time.Millisecond})
	core = identity.New(identity.Deps{Store: s.Store, Sources: []identity.PasswordSource{svc}, Federation: svc})
	ctx, cancel := context.WithCancel(context.Background())
	wait := svc.StartPeriodicSync(ctx)
	defer func() { cancel(); wait() }()

	deadline := time.Now().Add(10 * time.Second)
	for {
		last := getProvider(t, s, periodic.ID).SyncStatus.LastSync
		if last != nil && last.Created == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the periodic sync did not run: %+v", last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if realmUser(t, s, "ann") == nil {
		t.Fatal("no ann after the periodic sync")
	}
	// A second round comes a period after the first began.
	first := getProvider(t, s, periodic.ID).SyncStatus.LastSync.StartedAt
	for getProvider(t, s, periodic.ID).SyncStatus.LastSync.StartedAt == first {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatal("no second periodic sync")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wait()
	var manual []ldapfed.Provider
	s.Admin(http.MethodGet, "/admin/realms/other/user-federation", nil).Decode(t, &manual)
	if len(manual) != 1 || manual[0].SyncStatus.LastSync != nil {
		t.Fatalf("a provider without syncPeriod was synced: %+v", manual)
	}
}
