package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idenplane/idenplane/store"
)

// eventSuite is the conformance tests of the event tables.
func eventSuite() []subTest {
	return []subTest{
		{"AdminEventRoundTrip", testAdminEventRoundTrip},
		{"AdminEventFilters", testAdminEventFilters},
		{"LoginEventRoundTrip", testLoginEventRoundTrip},
		{"LoginEventFilters", testLoginEventFilters},
		{"LoginEventClear", testLoginEventClear},
		{"EventEachStopsOnError", testEventEachStopsOnError},
		{"EventRetention", testEventRetention},
		{"EventRealmDeleteCascades", testEventRealmDeleteCascades},
		{"RealmStats", testRealmStats},
		{"ConsentStats", testConsentStats},
	}
}

const (
	eventsTestRealmA = "11111111-1111-4111-8111-111111111111"
	eventsTestRealmB = "22222222-2222-4222-8222-222222222222"
)

// eventsTestRealms makes realms acme (events kept 3600 s) and beta (60 s).
func eventsTestRealms(t *testing.T, s *store.Store) (acme, beta *store.Realm) {
	t.Helper()
	acme = mustCreateRealm(t, s, testRealm(eventsTestRealmA, "acme", 1000))
	beta = testRealm(eventsTestRealmB, "beta", 2000)
	beta.EventsExpiration = 60
	mustCreateRealm(t, s, beta)
	return acme, beta
}

func eventsTestAdminEvent(id, realmID string, time int64, op, resType, path, authUser string) *store.AdminEvent {
	e := &store.AdminEvent{ID: id, RealmID: realmID, Time: time, OperationType: op, ResourceType: resType,
		ResourcePath: path, AuthType: "api-key", IPAddress: "192.0.2.1", Representation: `{"n":1}`}
	if authUser != "" {
		e.AuthType, e.AuthUserID, e.AuthUsername = "user", authUser, "admin-"+authUser[:4]
	}
	return e
}

func eventsTestMustAddAdmin(t *testing.T, s *store.Store, events ...*store.AdminEvent) {
	t.Helper()
	for _, e := range events {
		if err := s.AddAdminEvent(testCtx, e); err != nil {
			t.Fatalf("add admin event %s: %v", e.ID, err)
		}
	}
}

func eventsTestMustAddLogin(t *testing.T, s *store.Store, events ...*store.LoginEvent) {
	t.Helper()
	for _, e := range events {
		if err := s.AddLoginEvent(testCtx, e); err != nil {
			t.Fatalf("add login event %s: %v", e.ID, err)
		}
	}
}

func eventsTestAdminIDs(t *testing.T, s *store.Store, realmID string, f store.AdminEventFilter) []string {
	t.Helper()
	events, err := s.ListAdminEvents(testCtx, realmID, f)
	if err != nil {
		t.Fatalf("ListAdminEvents(%+v): %v", f, err)
	}
	ids := []string{}
	for _, e := range events {
		ids = append(ids, e.ID)
	}
	return ids
}

func eventsTestLoginIDs(t *testing.T, s *store.Store, realmID string, f store.LoginEventFilter) []string {
	t.Helper()
	events, err := s.ListLoginEvents(testCtx, realmID, f)
	if err != nil {
		t.Fatalf("ListLoginEvents(%+v): %v", f, err)
	}
	ids := []string{}
	for _, e := range events {
		ids = append(ids, e.ID)
	}
	return ids
}

// eventsTestCount counts a realm's login and admin events.
func eventsTestCount(t *testing.T, s *store.Store, realmID string) (login, admin int) {
	t.Helper()
	logins, err := s.ListLoginEvents(testCtx, realmID, store.LoginEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	admins, err := s.ListAdminEvents(testCtx, realmID, store.AdminEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(logins), len(admins)
}

func eventsTestMs(v int64) *int64 { return &v }

func testAdminEventRoundTrip(t *testing.T, s *store.Store) {
	acme, _ := eventsTestRealms(t, s)
	want := &store.AdminEvent{
		ID: "e0000000-0000-4000-8000-000000000001", RealmID: acme.ID, Time: 1_700_000_000_123,
		OperationType: "UPDATE", ResourceType: "USER", ResourcePath: "users/ü-ß,\"quoted\"",
		AuthType: "user", AuthUserID: "c0000000-0000-4000-8000-000000000001", AuthUsername: "root",
		IPAddress: "2001:db8::1", Representation: `{"password":"**********","nested":{"a":[1,2]}}`,
	}
	eventsTestMustAddAdmin(t, s, want)
	got, err := s.ListAdminEvents(testCtx, acme.ID, store.AdminEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "admin events", got, []*store.AdminEvent{want})

	mustBeErrConflict(t, "duplicate admin event id", s.AddAdminEvent(testCtx, want))
	orphan := *want
	orphan.ID, orphan.RealmID = "e0000000-0000-4000-8000-000000000002", "99999999-9999-4999-8999-999999999999"
	mustBeErrNotFound(t, "admin event of an unknown realm", s.AddAdminEvent(testCtx, &orphan))
	if ids := eventsTestAdminIDs(t, s, "99999999-9999-4999-8999-999999999999", store.AdminEventFilter{}); len(ids) != 0 {
		t.Fatalf("events of an unknown realm: %v", ids)
	}
}

func testAdminEventFilters(t *testing.T, s *store.Store) {
	acme, beta := eventsTestRealms(t, s)
	const root, ops = "c0000000-0000-4000-8000-000000000001", "c0000000-0000-4000-8000-000000000002"
	// e1..e6 in acme; e3 and e4 share a millisecond, so id breaks the tie.
	eventsTestMustAddAdmin(t, s,
		eventsTestAdminEvent("e1", acme.ID, 1000, "CREATE", "USER", "users/u1", ""),
		eventsTestAdminEvent("e2", acme.ID, 2000, "UPDATE", "USER", "users/u1", root),
		eventsTestAdminEvent("e4", acme.ID, 3000, "DELETE", "CLIENT", "clients/app", root),
		eventsTestAdminEvent("e3", acme.ID, 3000, "CREATE", "REALM_ROLE", "roles/admin", ops),
		eventsTestAdminEvent("e5", acme.ID, 4000, "ACTION", "USER", "users/u10/reset-password", ""),
		eventsTestAdminEvent("e6", acme.ID, 5000, "UPDATE", "GROUP", "Users/u1", ""),
		eventsTestAdminEvent("b1", beta.ID, 3000, "CREATE", "USER", "users/u1", root),
	)
	for _, c := range []struct {
		name string
		f    store.AdminEventFilter
		want []string
	}{
		{"all, newest first", store.AdminEventFilter{}, []string{"e6", "e5", "e4", "e3", "e2", "e1"}},
		{"operation", store.AdminEventFilter{OperationTypes: []string{"CREATE"}}, []string{"e3", "e1"}},
		{"operations", store.AdminEventFilter{OperationTypes: []string{"CREATE", "DELETE"}}, []string{"e4", "e3", "e1"}},
		{"resource", store.AdminEventFilter{ResourceTypes: []string{"USER"}}, []string{"e5", "e2", "e1"}},
		{"resources", store.AdminEventFilter{ResourceTypes: []string{"CLIENT", "GROUP"}}, []string{"e6", "e4"}},
		{"resource is exact", store.AdminEventFilter{ResourceTypes: []string{"user"}}, []string{}},
		{"path prefix", store.AdminEventFilter{ResourcePathPrefix: "users/u1"}, []string{"e5", "e2", "e1"}},
		{"path prefix with slash", store.AdminEventFilter{ResourcePathPrefix: "users/u1/"}, []string{}},
		{"path exact", store.AdminEventFilter{ResourcePathPrefix: "clients/app"}, []string{"e4"}},
		{"path is case-sensitive", store.AdminEventFilter{ResourcePathPrefix: "Users/"}, []string{"e6"}},
		{"path wildcards are literal", store.AdminEventFilter{ResourcePathPrefix: "users/%"}, []string{}},
		{"path underscore is literal", store.AdminEventFilter{ResourcePathPrefix: "users_"}, []string{}},
		{"auth user", store.AdminEventFilter{AuthUserID: root}, []string{"e4", "e2"}},
		{"from inclusive", store.AdminEventFilter{EventWindow: store.EventWindow{From: eventsTestMs(3000)}}, []string{"e6", "e5", "e4", "e3"}},
		{"to inclusive", store.AdminEventFilter{EventWindow: store.EventWindow{To: eventsTestMs(3000)}}, []string{"e4", "e3", "e2", "e1"}},
		{"from and to", store.AdminEventFilter{EventWindow: store.EventWindow{From: eventsTestMs(2000), To: eventsTestMs(4000)}}, []string{"e5", "e4", "e3", "e2"}},
		{"empty range", store.AdminEventFilter{EventWindow: store.EventWindow{From: eventsTestMs(2001), To: eventsTestMs(2999)}}, []string{}},
		{"combined", store.AdminEventFilter{OperationTypes: []string{"UPDATE", "DELETE"}, ResourceTypes: []string{"USER", "CLIENT"}, AuthUserID: root, EventWindow: store.EventWindow{From: eventsTestMs(2500)}}, []string{"e4"}},
		{"first page", store.AdminEventFilter{EventWindow: store.EventWindow{Max: 2}}, []string{"e6", "e5"}},
		{"second page", store.AdminEventFilter{EventWindow: store.EventWindow{First: 2, Max: 2}}, []string{"e4", "e3"}},
		{"last page", store.AdminEventFilter{EventWindow: store.EventWindow{First: 4, Max: 2}}, []string{"e2", "e1"}},
		{"past the end", store.AdminEventFilter{EventWindow: store.EventWindow{First: 6, Max: 2}}, []string{}},
		{"offset without max", store.AdminEventFilter{EventWindow: store.EventWindow{First: 3}}, []string{"e3", "e2", "e1"}},
		{"filter then page", store.AdminEventFilter{ResourceTypes: []string{"USER"}, EventWindow: store.EventWindow{First: 1, Max: 1}}, []string{"e2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustEqual(t, c.name, eventsTestAdminIDs(t, s, acme.ID, c.f), c.want)
		})
	}
	mustEqual(t, "other realm", eventsTestAdminIDs(t, s, beta.ID, store.AdminEventFilter{}), []string{"b1"})
}

func testLoginEventRoundTrip(t *testing.T, s *store.Store) {
	acme, _ := eventsTestRealms(t, s)
	want := &store.LoginEvent{
		ID: "l1", RealmID: acme.ID, Time: 1_700_000_000_456, Type: "LOGIN_ERROR",
		UserID: "a0000000-0000-4000-8000-000000000001", ClientID: "web", SessionID: "s1", IPAddress: "192.0.2.9",
		Error: "invalid_user_credentials", Details: map[string]string{"username": "alice", "auth_method": "openid-connect"},
	}
	bare := &store.LoginEvent{ID: "l2", RealmID: acme.ID, Time: 1_700_000_000_000, Type: "CLIENT_LOGIN"}
	eventsTestMustAddLogin(t, s, want, bare)
	got, err := s.ListLoginEvents(testCtx, acme.ID, store.LoginEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// Nil details come back as an empty object.
	bareWant := *bare
	bareWant.Details = map[string]string{}
	mustEqual(t, "login events", got, []*store.LoginEvent{want, &bareWant})

	mustBeErrConflict(t, "duplicate login event id", s.AddLoginEvent(testCtx, want))
	orphan := &store.LoginEvent{ID: "l3", RealmID: "99999999-9999-4999-8999-999999999999", Time: 1, Type: "LOGIN"}
	mustBeErrNotFound(t, "login event of an unknown realm", s.AddLoginEvent(testCtx, orphan))
}

func testLoginEventFilters(t *testing.T, s *store.Store) {
	acme, beta := eventsTestRealms(t, s)
	const alice, bob = "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"
	ev := func(id, realmID string, time int64, typ, user, client string) *store.LoginEvent {
		return &store.LoginEvent{ID: id, RealmID: realmID, Time: time, Type: store.EventType(typ), UserID: user, ClientID: client}
	}
	eventsTestMustAddLogin(t, s,
		ev("l1", acme.ID, 1000, "LOGIN", alice, "web"),
		ev("l2", acme.ID, 2000, "LOGIN_ERROR", bob, "web"),
		ev("l3", acme.ID, 3000, "CODE_TO_TOKEN", alice, "web"),
		ev("l4", acme.ID, 3000, "LOGIN", bob, "cli"),
		ev("l5", acme.ID, 4000, "CLIENT_LOGIN", "", "svc"),
		ev("x1", beta.ID, 2500, "LOGIN", alice, "web"),
	)
	for _, c := range []struct {
		name string
		f    store.LoginEventFilter
		want []string
	}{
		{"all, newest first", store.LoginEventFilter{}, []string{"l5", "l4", "l3", "l2", "l1"}},
		{"type", store.LoginEventFilter{Types: []string{"LOGIN"}}, []string{"l4", "l1"}},
		{"types", store.LoginEventFilter{Types: []string{"LOGIN_ERROR", "CLIENT_LOGIN"}}, []string{"l5", "l2"}},
		{"user", store.LoginEventFilter{UserID: alice}, []string{"l3", "l1"}},
		{"client", store.LoginEventFilter{ClientID: "web"}, []string{"l3", "l2", "l1"}},
		{"client is exact", store.LoginEventFilter{ClientID: "we"}, []string{}},
		{"user and type", store.LoginEventFilter{UserID: bob, Types: []string{"LOGIN"}}, []string{"l4"}},
		{"from", store.LoginEventFilter{EventWindow: store.EventWindow{From: eventsTestMs(3000)}}, []string{"l5", "l4", "l3"}},
		{"to", store.LoginEventFilter{EventWindow: store.EventWindow{To: eventsTestMs(2000)}}, []string{"l2", "l1"}},
		{"range and client", store.LoginEventFilter{ClientID: "web", EventWindow: store.EventWindow{From: eventsTestMs(1500), To: eventsTestMs(3500)}}, []string{"l3", "l2"}},
		{"page", store.LoginEventFilter{EventWindow: store.EventWindow{First: 1, Max: 3}}, []string{"l4", "l3", "l2"}},
		{"offset without max", store.LoginEventFilter{EventWindow: store.EventWindow{First: 4}}, []string{"l1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustEqual(t, c.name, eventsTestLoginIDs(t, s, acme.ID, c.f), c.want)
		})
	}
	mustEqual(t, "other realm", eventsTestLoginIDs(t, s, beta.ID, store.LoginEventFilter{}), []string{"x1"})
}

func testLoginEventClear(t *testing.T, s *store.Store) {
	acme, beta := eventsTestRealms(t, s)
	eventsTestMustAddLogin(t, s,
		&store.LoginEvent{ID: "l1", RealmID: acme.ID, Time: 1, Type: "LOGIN"},
		&store.LoginEvent{ID: "l2", RealmID: acme.ID, Time: 2, Type: "LOGOUT"},
		&store.LoginEvent{ID: "x1", RealmID: beta.ID, Time: 1, Type: "LOGIN"},
	)
	eventsTestMustAddAdmin(t, s, eventsTestAdminEvent("e1", acme.ID, 1, "CREATE", "USER", "users/u", ""))
	if err := s.ClearLoginEvents(testCtx, acme.ID); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "acme login events", eventsTestLoginIDs(t, s, acme.ID, store.LoginEventFilter{}), []string{})
	mustEqual(t, "beta login events", eventsTestLoginIDs(t, s, beta.ID, store.LoginEventFilter{}), []string{"x1"})
	mustEqual(t, "acme admin events", eventsTestAdminIDs(t, s, acme.ID, store.AdminEventFilter{}), []string{"e1"})
	// Clearing nothing is fine.
	if err := s.ClearLoginEvents(testCtx, acme.ID); err != nil {
		t.Fatalf("second clear: %v", err)
	}
}

func testEventEachStopsOnError(t *testing.T, s *store.Store) {
	acme, _ := eventsTestRealms(t, s)
	for i := range 5 {
		eventsTestMustAddAdmin(t, s, eventsTestAdminEvent(fmt.Sprintf("e%d", i), acme.ID, int64(i), "CREATE", "USER", "users/u", ""))
		eventsTestMustAddLogin(t, s, &store.LoginEvent{ID: fmt.Sprintf("l%d", i), RealmID: acme.ID, Time: int64(i), Type: "LOGIN"})
	}
	stop := errors.New("stop")
	var seen []string
	err := s.EachAdminEvent(testCtx, acme.ID, store.AdminEventFilter{}, func(e *store.AdminEvent) error {
		seen = append(seen, e.ID)
		if len(seen) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("EachAdminEvent returned %v, want the callback's error", err)
	}
	mustEqual(t, "admin events seen", seen, []string{"e4", "e3"})
	seen = nil
	err = s.EachLoginEvent(testCtx, acme.ID, store.LoginEventFilter{}, func(e *store.LoginEvent) error {
		seen = append(seen, e.ID)
		if len(seen) == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("EachLoginEvent returned %v, want the callback's error", err)
	}
	mustEqual(t, "login events seen", seen, []string{"l4", "l3", "l2"})
}

func testEventRetention(t *testing.T, s *store.Store) {
	acme, beta := eventsTestRealms(t, s) // kept 3600 s and 60 s
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
	eventsTestMustAddLogin(t, s,
		&store.LoginEvent{ID: "a-old", RealmID: acme.ID, Time: at(time.Hour + time.Millisecond), Type: "LOGIN"},
		&store.LoginEvent{ID: "a-edge", RealmID: acme.ID, Time: at(time.Hour), Type: "LOGIN"},
		&store.LoginEvent{ID: "a-mid", RealmID: acme.ID, Time: at(30 * time.Minute), Type: "LOGIN"},
		&store.LoginEvent{ID: "b-old", RealmID: beta.ID, Time: at(30 * time.Minute), Type: "LOGIN"},
		&store.LoginEvent{ID: "b-older", RealmID: beta.ID, Time: at(61 * time.Second), Type: "LOGIN"},
		&store.LoginEvent{ID: "b-new", RealmID: beta.ID, Time: at(59 * time.Second), Type: "LOGIN"},
	)
	eventsTestMustAddAdmin(t, s,
		eventsTestAdminEvent("a-old", acme.ID, at(2*time.Hour), "CREATE", "USER", "users/u", ""),
		eventsTestAdminEvent("a-new", acme.ID, at(time.Minute), "CREATE", "USER", "users/u", ""),
		eventsTestAdminEvent("b-old", beta.ID, at(2*time.Minute), "CREATE", "USER", "users/u", ""),
		eventsTestAdminEvent("b-new", beta.ID, at(0), "CREATE", "USER", "users/u", ""),
	)
	login, admin, err := s.DeleteExpiredEvents(testCtx, now)
	if err != nil {
		t.Fatal(err)
	}
	if login != 3 || admin != 2 {
		t.Fatalf("deleted %d login and %d admin events, want 3 and 2", login, admin)
	}
	mustEqual(t, "acme login", eventsTestLoginIDs(t, s, acme.ID, store.LoginEventFilter{}), []string{"a-mid", "a-edge"})
	mustEqual(t, "beta login", eventsTestLoginIDs(t, s, beta.ID, store.LoginEventFilter{}), []string{"b-new"})
	mustEqual(t, "acme admin", eventsTestAdminIDs(t, s, acme.ID, store.AdminEventFilter{}), []string{"a-new"})
	mustEqual(t, "beta admin", eventsTestAdminIDs(t, s, beta.ID, store.AdminEventFilter{}), []string{"b-new"})

	// Again at the same time: nothing left to delete.
	if login, admin, err := s.DeleteExpiredEvents(testCtx, now); err != nil || login != 0 || admin != 0 {
		t.Fatalf("second run deleted %d and %d (%v), want nothing", login, admin, err)
	}
	// A day later, everything has expired.
	if login, admin, err := s.DeleteExpiredEvents(testCtx, now.Add(24*time.Hour)); err != nil || login != 3 || admin != 2 {
		t.Fatalf("a day later deleted %d and %d (%v), want 3 and 2", login, admin, err)
	}
}

func testEventRealmDeleteCascades(t *testing.T, s *store.Store) {
	acme, beta := eventsTestRealms(t, s)
	for _, r := range []*store.Realm{acme, beta} {
		eventsTestMustAddLogin(t, s, &store.LoginEvent{ID: "l-" + r.Name, RealmID: r.ID, Time: 1, Type: "LOGIN"})
		eventsTestMustAddAdmin(t, s, eventsTestAdminEvent("e-"+r.Name, r.ID, 1, "CREATE", "USER", "users/u", ""))
	}
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	// A realm made again with the deleted one's ID starts without events.
	mustCreateRealm(t, s, testRealm(acme.ID, "acme", 3000))
	if login, admin := eventsTestCount(t, s, acme.ID); login != 0 || admin != 0 {
		t.Fatalf("%d login and %d admin events left of the deleted realm", login, admin)
	}
	if login, admin := eventsTestCount(t, s, beta.ID); login != 1 || admin != 1 {
		t.Fatalf("%d login and %d admin events of the other realm, want 1 and 1", login, admin)
	}
}

// eventsTestSession makes a session as the OpenID Connect provider does:
// an online OAuth session has parent as its SSO session, an offline one
// has none.
func eventsTestSession(t *testing.T, s *store.Store, id, realmID, userID, kind, parent, clientID string, expiresAt int64) {
	t.Helper()
	sess := &store.Session{ID: id, RealmID: realmID, UserID: userID, Kind: kind, ParentID: parent, ClientID: clientID,
		IPAddress: "192.0.2.1", ExpiresAt: expiresAt, Offline: kind == store.SessionOAuth && parent == ""}
	if err := s.CreateSession(testCtx, sess); err != nil {
		t.Fatalf("create session %s: %v", id, err)
	}
}

func eventsTestClient(t *testing.T, s *store.Store, id, realmID, clientID string) *store.Client {
	t.Helper()
	c := &store.Client{ID: id, RealmID: realmID, ClientID: clientID, ClientType: "PUBLIC", Enabled: true, CreatedAt: 1}
	if err := s.CreateClient(testCtx, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func testRealmStats(t *testing.T, s *store.Store) {
	acme, beta := eventsTestRealms(t, s)
	now := int64(1_800_000_000_000)
	empty, err := s.GetRealmStats(testCtx, acme.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "stats of an empty realm", empty, &store.RealmStats{})

	web := eventsTestClient(t, s, "c1", acme.ID, "web")
	svc := eventsTestClient(t, s, "c2", acme.ID, "svc")
	other := eventsTestClient(t, s, "c3", beta.ID, "web")
	alice := mustCreateUser(t, s, testUser("u1", acme.ID, "alice", ""))
	mustCreateUser(t, s, testUser("u2", acme.ID, "bob", ""))
	robot := testUser("u3", acme.ID, "service-account-svc", "")
	robot.ServiceAccountClientID = svc.ID
	mustCreateUser(t, s, robot)
	carol := mustCreateUser(t, s, testUser("u4", beta.ID, "carol", ""))
	for i, r := range []*store.Role{
		{ID: "r1", RealmID: acme.ID, Name: "admin"},
		{ID: "r2", RealmID: acme.ID, Name: "viewer"},
		{ID: "r3", RealmID: acme.ID, ClientID: web.ID, Name: "editor"},
		{ID: "r4", RealmID: beta.ID, Name: "admin"},
		{ID: "r5", RealmID: beta.ID, ClientID: other.ID, Name: "editor"},
	} {
		r.CreatedAt = int64(i)
		if err := s.CreateRole(testCtx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []*store.Group{
		{ID: "g1", RealmID: acme.ID, Name: "staff"},
		{ID: "g2", RealmID: acme.ID, ParentID: "g1", Name: "ops"},
		{ID: "g3", RealmID: acme.ID, Name: "guests"},
		{ID: "g4", RealmID: beta.ID, Name: "staff"},
	} {
		if err := s.CreateGroup(testCtx, g); err != nil {
			t.Fatal(err)
		}
	}
	eventsTestSession(t, s, "s1", acme.ID, alice.ID, "sso", "", "", now+1)
	eventsTestSession(t, s, "s2", acme.ID, alice.ID, "sso", "", "", now+60_000)
	eventsTestSession(t, s, "s3", acme.ID, alice.ID, "sso", "", "", now) // expires now: no longer active
	eventsTestSession(t, s, "s4", acme.ID, alice.ID, "oauth", "s2", web.ID, now+1)
	eventsTestSession(t, s, "s5", acme.ID, alice.ID, "oauth", "", web.ID, now-1) // offline, expired
	eventsTestSession(t, s, "s6", beta.ID, carol.ID, "sso", "", "", now+1)

	const day = 24 * 60 * 60 * 1000
	eventsTestMustAddLogin(t, s,
		&store.LoginEvent{ID: "l1", RealmID: acme.ID, Time: now - 1000, Type: "LOGIN"},
		&store.LoginEvent{ID: "l2", RealmID: acme.ID, Time: now - day + 1, Type: "LOGIN_ERROR"},
		&store.LoginEvent{ID: "l3", RealmID: acme.ID, Time: now, Type: "CODE_TO_TOKEN_ERROR"},
		&store.LoginEvent{ID: "l4", RealmID: acme.ID, Time: now - 5, Type: "ERROR_REPORT_VIEWED"}, // not an _ERROR type
		&store.LoginEvent{ID: "l5", RealmID: acme.ID, Time: now - day, Type: "LOGIN_ERROR"},       // a day old: out
		&store.LoginEvent{ID: "l6", RealmID: beta.ID, Time: now, Type: "LOGIN_ERROR"},
	)
	eventsTestMustAddAdmin(t, s,
		eventsTestAdminEvent("e1", acme.ID, now-10, "CREATE", "USER", "users/u1", ""),
		eventsTestAdminEvent("e2", acme.ID, now-2*day, "CREATE", "USER", "users/u2", ""),
		eventsTestAdminEvent("e3", beta.ID, now, "CREATE", "USER", "users/u4", ""),
	)

	got, err := s.GetRealmStats(testCtx, acme.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "acme stats", got, &store.RealmStats{
		Users: 2, ServiceAccounts: 1, Clients: 2, RealmRoles: 2, ClientRoles: 1, Groups: 3,
		ActiveSessions: 2, ClientSessions: 1, LoginEventsLastDay: 4, LoginErrorsLastDay: 2, AdminEventsLastDay: 1,
	})
	got, err = s.GetRealmStats(testCtx, beta.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "beta stats", got, &store.RealmStats{
		Users: 1, Clients: 1, RealmRoles: 1, ClientRoles: 1, Groups: 1,
		ActiveSessions: 1, LoginEventsLastDay: 1, LoginErrorsLastDay: 1, AdminEventsLastDay: 1,
	})
}

func testConsentStats(t *testing.T, s *store.Store) {
	acme, beta := eventsTestRealms(t, s)
	empty, err := s.GetConsentStats(testCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "consents of an empty realm", empty, &store.ConsentStats{Clients: []store.ClientConsents{}})

	web := eventsTestClient(t, s, "c1", acme.ID, "web")
	cli := eventsTestClient(t, s, "c2", acme.ID, "cli")
	eventsTestClient(t, s, "c3", acme.ID, "idle") // nobody consented to it: not listed
	other := eventsTestClient(t, s, "c4", beta.ID, "web")
	for _, u := range []string{"u1", "u2", "u3"} {
		mustCreateUser(t, s, testUser(u, acme.ID, "user-"+u, ""))
	}
	mustCreateUser(t, s, testUser("u9", beta.ID, "user-u9", ""))
	upsert := func(user, client string, scopes ...string) {
		t.Helper()
		if err := s.UpsertConsent(testCtx, user, client, scopes, 1000); err != nil {
			t.Fatalf("consent of %s to %s: %v", user, client, err)
		}
	}
	upsert("u1", web.ID, "openid", "email")
	upsert("u1", web.ID, "openid", "profile", "profile") // replaces the first; a repeated scope counts once
	upsert("u2", web.ID, "openid", "email")
	upsert("u3", web.ID)
	upsert("u1", cli.ID, "openid")
	upsert("u9", other.ID, "openid")

	got, err := s.GetConsentStats(testCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "acme consents", got, &store.ConsentStats{
		TotalConsents: 4, UsersWithConsents: 3,
		Clients: []store.ClientConsents{
			{ClientID: "web", Users: 3, Scopes: map[string]int{"openid": 2, "profile": 1, "email": 1}},
			{ClientID: "cli", Users: 1, Scopes: map[string]int{"openid": 1}},
		},
	})

	// The upsert kept the grant time and moved the update time.
	if err := s.UpsertConsent(testCtx, "u2", web.ID, []string{"openid"}, 5000); err != nil {
		t.Fatal(err)
	}
	if c, err := s.GetConsent(testCtx, "u2", web.ID); err != nil || c.GrantedAt != 1000 || c.UpdatedAt != 5000 {
		t.Fatalf("consent after the upsert: %+v (%v), want granted at 1000 and updated at 5000", c, err)
	}

	// Ties in users keep clientId order.
	upsert("u2", cli.ID, "openid")
	upsert("u3", cli.ID, "openid")
	got, err = s.GetConsentStats(testCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Clients) != 2 || got.Clients[0].ClientID != "cli" || got.Clients[1].ClientID != "web" {
		t.Fatalf("clients with equal users: %+v, want cli then web", got.Clients)
	}

	for _, c := range []struct{ user, client string }{{"nobody", web.ID}, {"u1", "no-client"}} {
		if err := s.UpsertConsent(testCtx, c.user, c.client, []string{"openid"}, 1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("consent of %s to %s: %v, want ErrNotFound", c.user, c.client, err)
		}
	}
}
