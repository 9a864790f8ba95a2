package store

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// eventSuite is the conformance tests of the event tables.
func eventSuite() []suiteTest {
	return []suiteTest{
		{"AdminEventRoundTrip", suiteAdminEventRoundTrip},
		{"AdminEventFilters", suiteAdminEventFilters},
		{"LoginEventRoundTrip", suiteLoginEventRoundTrip},
		{"LoginEventFilters", suiteLoginEventFilters},
		{"LoginEventClear", suiteLoginEventClear},
		{"EventEachStopsOnError", suiteEventEachStopsOnError},
		{"EventRetention", suiteEventRetention},
		{"EventRealmDeleteCascades", suiteEventRealmDeleteCascades},
		{"RealmStats", suiteRealmStats},
		{"ConsentStats", suiteConsentStats},
	}
}

const (
	eventsTestRealmA = "11111111-1111-4111-8111-111111111111"
	eventsTestRealmB = "22222222-2222-4222-8222-222222222222"
)

// eventsTestRealms makes realms acme (events kept 3600 s) and beta (60 s).
func eventsTestRealms(t *testing.T, s *Store) (acme, beta *Realm) {
	t.Helper()
	acme = suiteMustCreateRealm(t, s, suiteRealm(eventsTestRealmA, "acme", 1000))
	beta = suiteRealm(eventsTestRealmB, "beta", 2000)
	beta.EventsExpiration = 60
	suiteMustCreateRealm(t, s, beta)
	return acme, beta
}

func eventsTestAdminEvent(id, realmID string, time int64, op, resType, path, authUser string) *AdminEvent {
	e := &AdminEvent{ID: id, RealmID: realmID, Time: time, OperationType: op, ResourceType: resType,
		ResourcePath: path, AuthType: "api-key", IPAddress: "192.0.2.1", Representation: `{"n":1}`}
	if authUser != "" {
		e.AuthType, e.AuthUserID, e.AuthUsername = "user", authUser, "admin-"+authUser[:4]
	}
	return e
}

func eventsTestMustAddAdmin(t *testing.T, s *Store, events ...*AdminEvent) {
	t.Helper()
	for _, e := range events {
		if err := s.AddAdminEvent(suiteCtx, e); err != nil {
			t.Fatalf("add admin event %s: %v", e.ID, err)
		}
	}
}

func eventsTestMustAddLogin(t *testing.T, s *Store, events ...*LoginEvent) {
	t.Helper()
	for _, e := range events {
		if err := s.AddLoginEvent(suiteCtx, e); err != nil {
			t.Fatalf("add login event %s: %v", e.ID, err)
		}
	}
}

func eventsTestAdminIDs(t *testing.T, s *Store, realmID string, f AdminEventFilter) []string {
	t.Helper()
	events, err := s.ListAdminEvents(suiteCtx, realmID, f)
	if err != nil {
		t.Fatalf("ListAdminEvents(%+v): %v", f, err)
	}
	ids := []string{}
	for _, e := range events {
		ids = append(ids, e.ID)
	}
	return ids
}

func eventsTestLoginIDs(t *testing.T, s *Store, realmID string, f LoginEventFilter) []string {
	t.Helper()
	events, err := s.ListLoginEvents(suiteCtx, realmID, f)
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
func eventsTestCount(t *testing.T, s *Store, realmID string) (login, admin int) {
	t.Helper()
	logins, err := s.ListLoginEvents(suiteCtx, realmID, LoginEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	admins, err := s.ListAdminEvents(suiteCtx, realmID, AdminEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(logins), len(admins)
}

func eventsTestMs(v int64) *int64 { return &v }

func suiteAdminEventRoundTrip(t *testing.T, s *Store) {
	acme, _ := eventsTestRealms(t, s)
	want := &AdminEvent{
		ID: "e0000000-0000-4000-8000-000000000001", RealmID: acme.ID, Time: 1_700_000_000_123,
		OperationType: "UPDATE", ResourceType: "USER", ResourcePath: "users/ü-ß,\"quoted\"",
		AuthType: "user", AuthUserID: "c0000000-0000-4000-8000-000000000001", AuthUsername: "root",
		IPAddress: "2001:db8::1", Representation: `{"password":"**********","nested":{"a":[1,2]}}`,
	}
	eventsTestMustAddAdmin(t, s, want)
	got, err := s.ListAdminEvents(suiteCtx, acme.ID, AdminEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "admin events", got, []*AdminEvent{want})

	if err := s.AddAdminEvent(suiteCtx, want); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate admin event id: %v, want ErrConflict", err)
	}
	orphan := *want
	orphan.ID, orphan.RealmID = "e0000000-0000-4000-8000-000000000002", "99999999-9999-4999-8999-999999999999"
	if err := s.AddAdminEvent(suiteCtx, &orphan); !errors.Is(err, ErrNotFound) {
		t.Fatalf("admin event of an unknown realm: %v, want ErrNotFound", err)
	}
	if ids := eventsTestAdminIDs(t, s, "99999999-9999-4999-8999-999999999999", AdminEventFilter{}); len(ids) != 0 {
		t.Fatalf("events of an unknown realm: %v", ids)
	}
}

func suiteAdminEventFilters(t *testing.T, s *Store) {
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
		f    AdminEventFilter
		want []string
	}{
		{"all, newest first", AdminEventFilter{}, []string{"e6", "e5", "e4", "e3", "e2", "e1"}},
		{"operation", AdminEventFilter{OperationTypes: []string{"CREATE"}}, []string{"e3", "e1"}},
		{"operations", AdminEventFilter{OperationTypes: []string{"CREATE", "DELETE"}}, []string{"e4", "e3", "e1"}},
		{"resource", AdminEventFilter{ResourceTypes: []string{"USER"}}, []string{"e5", "e2", "e1"}},
		{"resources", AdminEventFilter{ResourceTypes: []string{"CLIENT", "GROUP"}}, []string{"e6", "e4"}},
		{"resource is exact", AdminEventFilter{ResourceTypes: []string{"user"}}, []string{}},
		{"path prefix", AdminEventFilter{ResourcePathPrefix: "users/u1"}, []string{"e5", "e2", "e1"}},
		{"path prefix with slash", AdminEventFilter{ResourcePathPrefix: "users/u1/"}, []string{}},
		{"path exact", AdminEventFilter{ResourcePathPrefix: "clients/app"}, []string{"e4"}},
		{"path is case-sensitive", AdminEventFilter{ResourcePathPrefix: "Users/"}, []string{"e6"}},
		{"path wildcards are literal", AdminEventFilter{ResourcePathPrefix: "users/%"}, []string{}},
		{"path underscore is literal", AdminEventFilter{ResourcePathPrefix: "users_"}, []string{}},
		{"auth user", AdminEventFilter{AuthUserID: root}, []string{"e4", "e2"}},
		{"from inclusive", AdminEventFilter{EventWindow: EventWindow{From: eventsTestMs(3000)}}, []string{"e6", "e5", "e4", "e3"}},
		{"to inclusive", AdminEventFilter{EventWindow: EventWindow{To: eventsTestMs(3000)}}, []string{"e4", "e3", "e2", "e1"}},
		{"from and to", AdminEventFilter{EventWindow: EventWindow{From: eventsTestMs(2000), To: eventsTestMs(4000)}}, []string{"e5", "e4", "e3", "e2"}},
		{"empty range", AdminEventFilter{EventWindow: EventWindow{From: eventsTestMs(2001), To: eventsTestMs(2999)}}, []string{}},
		{"combined", AdminEventFilter{OperationTypes: []string{"UPDATE", "DELETE"}, ResourceTypes: []string{"USER", "CLIENT"}, AuthUserID: root, EventWindow: EventWindow{From: eventsTestMs(2500)}}, []string{"e4"}},
		{"first page", AdminEventFilter{EventWindow: EventWindow{Max: 2}}, []string{"e6", "e5"}},
		{"second page", AdminEventFilter{EventWindow: EventWindow{First: 2, Max: 2}}, []string{"e4", "e3"}},
		{"last page", AdminEventFilter{EventWindow: EventWindow{First: 4, Max: 2}}, []string{"e2", "e1"}},
		{"past the end", AdminEventFilter{EventWindow: EventWindow{First: 6, Max: 2}}, []string{}},
		{"offset without max", AdminEventFilter{EventWindow: EventWindow{First: 3}}, []string{"e3", "e2", "e1"}},
		{"filter then page", AdminEventFilter{ResourceTypes: []string{"USER"}, EventWindow: EventWindow{First: 1, Max: 1}}, []string{"e2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			suiteMustEqual(t, c.name, eventsTestAdminIDs(t, s, acme.ID, c.f), c.want)
		})
	}
	suiteMustEqual(t, "other realm", eventsTestAdminIDs(t, s, beta.ID, AdminEventFilter{}), []string{"b1"})
}

func suiteLoginEventRoundTrip(t *testing.T, s *Store) {
	acme, _ := eventsTestRealms(t, s)
	want := &LoginEvent{
		ID: "l1", RealmID: acme.ID, Time: 1_700_000_000_456, Type: "LOGIN_ERROR",
		UserID: "a0000000-0000-4000-8000-000000000001", ClientID: "web", SessionID: "s1", IPAddress: "192.0.2.9",
		Error: "invalid_user_credentials", Details: map[string]string{"username": "alice", "auth_method": "openid-connect"},
	}
	bare := &LoginEvent{ID: "l2", RealmID: acme.ID, Time: 1_700_000_000_000, Type: "CLIENT_LOGIN"}
	eventsTestMustAddLogin(t, s, want, bare)
	got, err := s.ListLoginEvents(suiteCtx, acme.ID, LoginEventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// Nil details come back as an empty object.
	bareWant := *bare
	bareWant.Details = map[string]string{}
	suiteMustEqual(t, "login events", got, []*LoginEvent{want, &bareWant})

	if err := s.AddLoginEvent(suiteCtx, want); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate login event id: %v, want ErrConflict", err)
	}
	orphan := &LoginEvent{ID: "l3", RealmID: "99999999-9999-4999-8999-999999999999", Time: 1, Type: "LOGIN"}
	if err := s.AddLoginEvent(suiteCtx, orphan); !errors.Is(err, ErrNotFound) {
		t.Fatalf("login event of an unknown realm: %v, want ErrNotFound", err)
	}
}

func suiteLoginEventFilters(t *testing.T, s *Store) {
	acme, beta := eventsTestRealms(t, s)
	const alice, bob = "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-000000000002"
	ev := func(id, realmID string, time int64, typ, user, client string) *LoginEvent {
		return &LoginEvent{ID: id, RealmID: realmID, Time: time, Type: typ, UserID: user, ClientID: client}
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
		f    LoginEventFilter
		want []string
	}{
		{"all, newest first", LoginEventFilter{}, []string{"l5", "l4", "l3", "l2", "l1"}},
		{"type", LoginEventFilter{Types: []string{"LOGIN"}}, []string{"l4", "l1"}},
		{"types", LoginEventFilter{Types: []string{"LOGIN_ERROR", "CLIENT_LOGIN"}}, []string{"l5", "l2"}},
		{"user", LoginEventFilter{UserID: alice}, []string{"l3", "l1"}},
		{"client", LoginEventFilter{ClientID: "web"}, []string{"l3", "l2", "l1"}},
		{"client is exact", LoginEventFilter{ClientID: "we"}, []string{}},
		{"user and type", LoginEventFilter{UserID: bob, Types: []string{"LOGIN"}}, []string{"l4"}},
		{"from", LoginEventFilter{EventWindow: EventWindow{From: eventsTestMs(3000)}}, []string{"l5", "l4", "l3"}},
		{"to", LoginEventFilter{EventWindow: EventWindow{To: eventsTestMs(2000)}}, []string{"l2", "l1"}},
		{"range and client", LoginEventFilter{ClientID: "web", EventWindow: EventWindow{From: eventsTestMs(1500), To: eventsTestMs(3500)}}, []string{"l3", "l2"}},
		{"page", LoginEventFilter{EventWindow: EventWindow{First: 1, Max: 3}}, []string{"l4", "l3", "l2"}},
		{"offset without max", LoginEventFilter{EventWindow: EventWindow{First: 4}}, []string{"l1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			suiteMustEqual(t, c.name, eventsTestLoginIDs(t, s, acme.ID, c.f), c.want)
		})
	}
	suiteMustEqual(t, "other realm", eventsTestLoginIDs(t, s, beta.ID, LoginEventFilter{}), []string{"x1"})
}

func suiteLoginEventClear(t *testing.T, s *Store) {
	acme, beta := eventsTestRealms(t, s)
	eventsTestMustAddLogin(t, s,
		&LoginEvent{ID: "l1", RealmID: acme.ID, Time: 1, Type: "LOGIN"},
		&LoginEvent{ID: "l2", RealmID: acme.ID, Time: 2, Type: "LOGOUT"},
		&LoginEvent{ID: "x1", RealmID: beta.ID, Time: 1, Type: "LOGIN"},
	)
	eventsTestMustAddAdmin(t, s, eventsTestAdminEvent("e1", acme.ID, 1, "CREATE", "USER", "users/u", ""))
	if err := s.ClearLoginEvents(suiteCtx, acme.ID); err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "acme login events", eventsTestLoginIDs(t, s, acme.ID, LoginEventFilter{}), []string{})
	suiteMustEqual(t, "beta login events", eventsTestLoginIDs(t, s, beta.ID, LoginEventFilter{}), []string{"x1"})
	suiteMustEqual(t, "acme admin events", eventsTestAdminIDs(t, s, acme.ID, AdminEventFilter{}), []string{"e1"})
	// Clearing nothing is fine.
	if err := s.ClearLoginEvents(suiteCtx, acme.ID); err != nil {
		t.Fatalf("second clear: %v", err)
	}
}

func suiteEventEachStopsOnError(t *testing.T, s *Store) {
	acme, _ := eventsTestRealms(t, s)
	for i := range 5 {
		eventsTestMustAddAdmin(t, s, eventsTestAdminEvent(fmt.Sprintf("e%d", i), acme.ID, int64(i), "CREATE", "USER", "users/u", ""))
		eventsTestMustAddLogin(t, s, &LoginEvent{ID: fmt.Sprintf("l%d", i), RealmID: acme.ID, Time: int64(i), Type: "LOGIN"})
	}
	stop := errors.New("stop")
	var seen []string
	err := s.EachAdminEvent(suiteCtx, acme.ID, AdminEventFilter{}, func(e *AdminEvent) error {
		seen = append(seen, e.ID)
		if len(seen) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("EachAdminEvent returned %v, want the callback's error", err)
	}
	suiteMustEqual(t, "admin events seen", seen, []string{"e4", "e3"})
	seen = nil
	err = s.EachLoginEvent(suiteCtx, acme.ID, LoginEventFilter{}, func(e *LoginEvent) error {
		seen = append(seen, e.ID)
		if len(seen) == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("EachLoginEvent returned %v, want the callback's error", err)
	}
	suiteMustEqual(t, "login events seen", seen, []string{"l4", "l3", "l2"})
}

func suiteEventRetention(t *testing.T, s *Store) {
	acme, beta := eventsTestRealms(t, s) // kept 3600 s and 60 s
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
	eventsTestMustAddLogin(t, s,
		&LoginEvent{ID: "a-old", RealmID: acme.ID, Time: at(time.Hour + time.Millisecond), Type: "LOGIN"},
		&LoginEvent{ID: "a-edge", RealmID: acme.ID, Time: at(time.Hour), Type: "LOGIN"},
		&LoginEvent{ID: "a-mid", RealmID: acme.ID, Time: at(30 * time.Minute), Type: "LOGIN"},
		&LoginEvent{ID: "b-old", RealmID: beta.ID, Time: at(30 * time.Minute), Type: "LOGIN"},
		&LoginEvent{ID: "b-older", RealmID: beta.ID, Time: at(61 * time.Second), Type: "LOGIN"},
		&LoginEvent{ID: "b-new", RealmID: beta.ID, Time: at(59 * time.Second), Type: "LOGIN"},
	)
	eventsTestMustAddAdmin(t, s,
		eventsTestAdminEvent("a-old", acme.ID, at(2*time.Hour), "CREATE", "USER", "users/u", ""),
		eventsTestAdminEvent("a-new", acme.ID, at(time.Minute), "CREATE", "USER", "users/u", ""),
		eventsTestAdminEvent("b-old", beta.ID, at(2*time.Minute), "CREATE", "USER", "users/u", ""),
		eventsTestAdminEvent("b-new", beta.ID, at(0), "CREATE", "USER", "users/u", ""),
	)
	login, admin, err := s.DeleteExpiredEvents(suiteCtx, now)
	if err != nil {
		t.Fatal(err)
	}
	if login != 3 || admin != 2 {
		t.Fatalf("deleted %d login and %d admin events, want 3 and 2", login, admin)
	}
	suiteMustEqual(t, "acme login", eventsTestLoginIDs(t, s, acme.ID, LoginEventFilter{}), []string{"a-mid", "a-edge"})
	suiteMustEqual(t, "beta login", eventsTestLoginIDs(t, s, beta.ID, LoginEventFilter{}), []string{"b-new"})
	suiteMustEqual(t, "acme admin", eventsTestAdminIDs(t, s, acme.ID, AdminEventFilter{}), []string{"a-new"})
	suiteMustEqual(t, "beta admin", eventsTestAdminIDs(t, s, beta.ID, AdminEventFilter{}), []string{"b-new"})

	// Again at the same time: nothing left to delete.
	if login, admin, err := s.DeleteExpiredEvents(suiteCtx, now); err != nil || login != 0 || admin != 0 {
		t.Fatalf("second run deleted %d and %d (%v), want nothing", login, admin, err)
	}
	// A day later, everything has expired.
	if login, admin, err := s.DeleteExpiredEvents(suiteCtx, now.Add(24*time.Hour)); err != nil || login != 3 || admin != 2 {
		t.Fatalf("a day later deleted %d and %d (%v), want 3 and 2", login, admin, err)
	}
}

func suiteEventRealmDeleteCascades(t *testing.T, s *Store) {
	acme, beta := eventsTestRealms(t, s)
	for _, r := range []*Realm{acme, beta} {
		eventsTestMustAddLogin(t, s, &LoginEvent{ID: "l-" + r.Name, RealmID: r.ID, Time: 1, Type: "LOGIN"})
		eventsTestMustAddAdmin(t, s, eventsTestAdminEvent("e-"+r.Name, r.ID, 1, "CREATE", "USER", "users/u", ""))
	}
	if err := s.DeleteRealm(suiteCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	// A realm made again with the deleted one's ID starts without events.
	suiteMustCreateRealm(t, s, suiteRealm(acme.ID, "acme", 3000))
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
func eventsTestSession(t *testing.T, s *Store, id, realmID, userID, kind, parent, clientID string, expiresAt int64) {
	t.Helper()
	sess := &Session{ID: id, RealmID: realmID, UserID: userID, Kind: kind, ParentID: parent, ClientID: clientID,
		IPAddress: "192.0.2.1", ExpiresAt: expiresAt, Offline: kind == SessionOAuth && parent == ""}
	if err := s.CreateSession(suiteCtx, sess); err != nil {
		t.Fatalf("create session %s: %v", id, err)
	}
}

func eventsTestClient(t *testing.T, s *Store, id, realmID, clientID string) *Client {
	t.Helper()
	c := &Client{ID: id, RealmID: realmID, ClientID: clientID, ClientType: "PUBLIC", Enabled: true, CreatedAt: 1}
	if err := s.CreateClient(suiteCtx, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func suiteRealmStats(t *testing.T, s *Store) {
	acme, beta := eventsTestRealms(t, s)
	now := int64(1_800_000_000_000)
	empty, err := s.GetRealmStats(suiteCtx, acme.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "stats of an empty realm", empty, &RealmStats{})

	web := eventsTestClient(t, s, "c1", acme.ID, "web")
	svc := eventsTestClient(t, s, "c2", acme.ID, "svc")
	other := eventsTestClient(t, s, "c3", beta.ID, "web")
	alice := suiteMustCreateUser(t, s, suiteUser("u1", acme.ID, "alice", ""))
	suiteMustCreateUser(t, s, suiteUser("u2", acme.ID, "bob", ""))
	robot := suiteUser("u3", acme.ID, "service-account-svc", "")
	robot.ServiceAccountClientID = svc.ID
	suiteMustCreateUser(t, s, robot)
	carol := suiteMustCreateUser(t, s, suiteUser("u4", beta.ID, "carol", ""))
	for i, r := range []*Role{
		{ID: "r1", RealmID: acme.ID, Name: "admin"},
		{ID: "r2", RealmID: acme.ID, Name: "viewer"},
		{ID: "r3", RealmID: acme.ID, ClientID: web.ID, Name: "editor"},
		{ID: "r4", RealmID: beta.ID, Name: "admin"},
		{ID: "r5", RealmID: beta.ID, ClientID: other.ID, Name: "editor"},
	} {
		r.CreatedAt = int64(i)
		if err := s.CreateRole(suiteCtx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []*Group{
		{ID: "g1", RealmID: acme.ID, Name: "staff"},
		{ID: "g2", RealmID: acme.ID, ParentID: "g1", Name: "ops"},
		{ID: "g3", RealmID: acme.ID, Name: "guests"},
		{ID: "g4", RealmID: beta.ID, Name: "staff"},
	} {
		if err := s.CreateGroup(suiteCtx, g); err != nil {
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
		&LoginEvent{ID: "l1", RealmID: acme.ID, Time: now - 1000, Type: "LOGIN"},
		&LoginEvent{ID: "l2", RealmID: acme.ID, Time: now - day + 1, Type: "LOGIN_ERROR"},
		&LoginEvent{ID: "l3", RealmID: acme.ID, Time: now, Type: "CODE_TO_TOKEN_ERROR"},
		&LoginEvent{ID: "l4", RealmID: acme.ID, Time: now - 5, Type: "ERROR_REPORT_VIEWED"}, // not an _ERROR type
		&LoginEvent{ID: "l5", RealmID: acme.ID, Time: now - day, Type: "LOGIN_ERROR"},       // a day old: out
		&LoginEvent{ID: "l6", RealmID: beta.ID, Time: now, Type: "LOGIN_ERROR"},
	)
	eventsTestMustAddAdmin(t, s,
		eventsTestAdminEvent("e1", acme.ID, now-10, "CREATE", "USER", "users/u1", ""),
		eventsTestAdminEvent("e2", acme.ID, now-2*day, "CREATE", "USER", "users/u2", ""),
		eventsTestAdminEvent("e3", beta.ID, now, "CREATE", "USER", "users/u4", ""),
	)

	got, err := s.GetRealmStats(suiteCtx, acme.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "acme stats", got, &RealmStats{
		Users: 2, ServiceAccounts: 1, Clients: 2, RealmRoles: 2, ClientRoles: 1, Groups: 3,
		ActiveSessions: 2, ClientSessions: 1, LoginEventsLastDay: 4, LoginErrorsLastDay: 2, AdminEventsLastDay: 1,
	})
	got, err = s.GetRealmStats(suiteCtx, beta.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "beta stats", got, &RealmStats{
		Users: 1, Clients: 1, RealmRoles: 1, ClientRoles: 1, Groups: 1,
		ActiveSessions: 1, LoginEventsLastDay: 1, LoginErrorsLastDay: 1, AdminEventsLastDay: 1,
	})
}

func suiteConsentStats(t *testing.T, s *Store) {
	acme, beta := eventsTestRealms(t, s)
	empty, err := s.GetConsentStats(suiteCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "consents of an empty realm", empty, &ConsentStats{Clients: []ClientConsents{}})

	web := eventsTestClient(t, s, "c1", acme.ID, "web")
	cli := eventsTestClient(t, s, "c2", acme.ID, "cli")
	eventsTestClient(t, s, "c3", acme.ID, "idle") // nobody consented to it: not listed
	other := eventsTestClient(t, s, "c4", beta.ID, "web")
	for _, u := range []string{"u1", "u2", "u3"} {
		suiteMustCreateUser(t, s, suiteUser(u, acme.ID, "user-"+u, ""))
	}
	suiteMustCreateUser(t, s, suiteUser("u9", beta.ID, "user-u9", ""))
	upsert := func(user, client string, scopes ...string) {
		t.Helper()
		if err := s.UpsertConsent(suiteCtx, user, client, scopes, 1000); err != nil {
			t.Fatalf("consent of %s to %s: %v", user, client, err)
		}
	}
	upsert("u1", web.ID, "openid", "email")
	upsert("u1", web.ID, "openid", "profile", "profile") // replaces the first; a repeated scope counts once
	upsert("u2", web.ID, "openid", "email")
	upsert("u3", web.ID)
	upsert("u1", cli.ID, "openid")
	upsert("u9", other.ID, "openid")

	got, err := s.GetConsentStats(suiteCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "acme consents", got, &ConsentStats{
		TotalConsents: 4, UsersWithConsents: 3,
		Clients: []ClientConsents{
			{ClientID: "web", Users: 3, Scopes: map[string]int{"openid": 2, "profile": 1, "email": 1}},
			{ClientID: "cli", Users: 1, Scopes: map[string]int{"openid": 1}},
		},
	})

	// The upsert kept the grant time and moved the update time.
	if err := s.UpsertConsent(suiteCtx, "u2", web.ID, []string{"openid"}, 5000); err != nil {
		t.Fatal(err)
	}
	if c, err := s.GetConsent(suiteCtx, "u2", web.ID); err != nil || c.GrantedAt != 1000 || c.UpdatedAt != 5000 {
		t.Fatalf("consent after the upsert: %+v (%v), want granted at 1000 and updated at 5000", c, err)
	}

	// Ties in users keep clientId order.
	upsert("u2", cli.ID, "openid")
	upsert("u3", cli.ID, "openid")
	got, err = s.GetConsentStats(suiteCtx, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Clients) != 2 || got.Clients[0].ClientID != "cli" || got.Clients[1].ClientID != "web" {
		t.Fatalf("clients with equal users: %+v, want cli then web", got.Clients)
	}

	for _, c := range []struct{ user, client string }{{"nobody", web.ID}, {"u1", "no-client"}} {
		if err := s.UpsertConsent(suiteCtx, c.user, c.client, []string{"openid"}, 1); !errors.Is(err, ErrNotFound) {
			t.Fatalf("consent of %s to %s: %v, want ErrNotFound", c.user, c.client, err)
		}
	}
}
