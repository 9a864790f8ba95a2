package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

func sessionRiskSuite() []subTest {
	return []subTest{
		{"RiskPolicyScope", testRiskPolicyScope},
		{"SessionRiskProfiles", testSessionRiskProfiles},
		{"SessionRiskStepUpOwed", testSessionRiskStepUpOwed},
		{"SessionRiskRefusedTokens", testSessionRiskRefusedTokens},
		{"SessionRiskEvents", testSessionRiskEvents},
		{"RiskBaselines", testRiskBaselines},
		{"SessionRiskRetention", testSessionRiskRetention},
	}
}

// sessionRiskTestProfile is the profile of the SSO session id of user,
// at level with the signals present, as reads return it without the
// session's liveness.
func sessionRiskTestProfile(id, user, level, present string, updated int64) *store.SessionRisk {
	return &store.SessionRisk{SessionID: id, RealmID: sessionsTestRealm, UserID: user, AssessmentID: "a-" + id, ClientID: "web-app",
		Score: 40, Level: level, Signals: `[{"signal":"new_ip","state":"present"}]`, Present: present,
		Places: `[{"ip":"198.51.100.7","at":1}]`, IPAddress: "198.51.100.7", Country: "FR", Observations: 1,
		StartedAt: updated - 10, UpdatedAt: updated, Username: user}
}

// A policy keeps its scope; one written before scopes is a sign-in's.
func testRiskPolicyScope(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	p := &store.RiskPolicy{ID: "p1", RealmID: sessionsTestRealm, Name: "end travellers", Enabled: true, Conditions: "{}",
		Action: "end-session", Scope: "session", CreatedAt: 1, UpdatedAt: 1}
	if err := s.CreateRiskPolicy(testCtx, p); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRiskPolicy(testCtx, sessionsTestRealm, "p1")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "policy", got, p)
	p.Scope, p.Action, p.UpdatedAt = "sign-in", "deny", 2
	if err := s.UpdateRiskPolicy(testCtx, p); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListRiskPolicies(testCtx, sessionsTestRealm)
	if err != nil || len(list) != 1 {
		t.Fatalf("policies %+v %v", list, err)
	}
	mustEqual(t, "policy after the change", list[0], p)
}

// A profile is read with its user's name and whether its session is
// live; it outlives its session; writes swap on its version; the lists
// filter and page; none of it moves the caches' generations.
func testSessionRiskProfiles(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("s1", sessionsTestRealm, "alice", now-50, now+hour),
		sessionsTestSSO("s2", sessionsTestRealm, "bob", now-50, now+hour),
		sessionsTestSSO("s3", sessionsTestRealm, "alice", now-50, now+hour))
	gen, rev := s.Generation(), s.RevocationGeneration()
	p1 := sessionRiskTestProfile("s1", "alice", "medium", ",new_ip,", now)
	if err := s.StartSessionRisk(testCtx, p1); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetSessionRisk(testCtx, sessionsTestRealm, "s1", now)
	if err != nil {
		t.Fatal(err)
	}
	p1.Active = true
	mustEqual(t, "started profile", got, p1)
	mustBeErrNotFound(t, "a profile of another realm", sessionsTestErr(s.GetSessionRisk(testCtx, sessionsTestOther, "s1", now)))
	mustBeErrNotFound(t, "no profile", sessionsTestErr(s.GetSessionRisk(testCtx, sessionsTestRealm, "s2", now)))

	// A sign-in into the session again starts it afresh.
	again := sessionRiskTestProfile("s1", "alice", "low", ",", now+1)
	if err := s.StartSessionRisk(testCtx, again); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSessionRisk(testCtx, sessionsTestRealm, "s1", now); got.Level != "low" || got.AssessmentID != "a-s1" {
		t.Fatalf("started again: %+v", got)
	}

	// Compare-and-swap: the writer that read version 1 wins, the other
	// changes nothing.
	first, second := *got, *got
	first.Level, first.Observations, first.PolicyID, first.Action = "high", 2, "p1", "notify"
	if err := s.SaveSessionRisk(testCtx, &first, 1); err != nil {
		t.Fatal(err)
	}
	second.Level, second.Observations = "critical", 2
	mustBeErrConflict(t, "a stale write", s.SaveSessionRisk(testCtx, &second, 1))
	mustBeErrConflict(t, "an insert over a profile", s.SaveSessionRisk(testCtx, &second, -1))
	if got, _ := s.GetSessionRisk(testCtx, sessionsTestRealm, "s1", now); got.Level != "high" || got.Observations != 2 || got.Action != "notify" {
		t.Fatalf("after the race: %+v", got)
	}
	p2 := sessionRiskTestProfile("s2", "bob", "critical", ",new_ip,impossible_travel,", now+10)
	if err := s.SaveSessionRisk(testCtx, p2, -1); err != nil {
		t.Fatal(err)
	}
	p3 := sessionRiskTestProfile("s3", "alice", "low", ",", now+20)
	p3.EndedBy = "end-session"
	if err := s.SaveSessionRisk(testCtx, p3, -1); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen || s.RevocationGeneration() != rev {
		t.Fatal("writing session risk profiles moved a cache generation")
	}

	// s2's session ends otherwise; its profile stays.
	if _, err := s.DeleteSession(testCtx, sessionsTestRealm, "s2", store.SessionSSO, now); err != nil {
		t.Fatal(err)
	}
	ids := func(f store.SessionRiskFilter, first, max int) []string {
		t.Helper()
		list, err := s.ListSessionRisks(testCtx, sessionsTestRealm, f, now, first, max)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, p := range list {
			out = append(out, p.SessionID+":"+p.Status())
		}
		return out
	}
	mustEqual(t, "all, latest first", ids(store.SessionRiskFilter{}, 0, 10), []string{"s3:ended-by-risk", "s2:ended", "s1:active"})
	mustEqual(t, "a page", ids(store.SessionRiskFilter{}, 1, 1), []string{"s2:ended"})
	mustEqual(t, "by user", ids(store.SessionRiskFilter{UserID: "alice"}, 0, 10), []string{"s3:ended-by-risk", "s1:active"})
	mustEqual(t, "by level", ids(store.SessionRiskFilter{Level: "critical"}, 0, 10), []string{"s2:ended"})
	mustEqual(t, "by signal", ids(store.SessionRiskFilter{Signal: "impossible_travel"}, 0, 10), []string{"s2:ended"})
	mustEqual(t, "active", ids(store.SessionRiskFilter{Status: store.SessionRiskActive}, 0, 10), []string{"s1:active"})
	mustEqual(t, "ended", ids(store.SessionRiskFilter{Status: store.SessionRiskEnded}, 0, 10), []string{"s2:ended"})
	mustEqual(t, "ended by risk", ids(store.SessionRiskFilter{Status: store.SessionRiskEndedByRisk}, 0, 10), []string{"s3:ended-by-risk"})
	mustEqual(t, "a window", ids(store.SessionRiskFilter{From: now + 5, To: now + 20}, 0, 10), []string{"s2:ended"})
	if list, err := s.ListSessionRisks(testCtx, sessionsTestOther, store.SessionRiskFilter{}, now, 0, 10); err != nil || len(list) != 0 {
		t.Fatalf("another realm's list: %+v %v", list, err)
	}
	var outlines []store.SessionRiskOutline
	err = s.EachSessionRiskOutline(testCtx, sessionsTestRealm, store.SessionRiskFilter{UserID: "alice"}, now,
		func(o store.SessionRiskOutline) { outlines = append(outlines, o) })
	if err != nil || len(outlines) != 2 {
		t.Fatalf("outlines %+v %v", outlines, err)
	}
	for _, o := range outlines {
		if o.Status == store.SessionRiskActive && (o.Level != "high" || o.Action != "notify") || o.Status == store.SessionRiskEnded {
			t.Fatalf("outline %+v", o)
		}
	}
	// The user's deletion takes their profiles.
	if err := s.DeleteUser(testCtx, sessionsTestRealm, "bob"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "a deleted user's profile", sessionsTestErr(s.GetSessionRisk(testCtx, sessionsTestRealm, "s2", now)))
}

// A session a policy ended asking a step-up leaves the user owing one
// until a sign-in gives it.
func testSessionRiskStepUpOwed(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	mustBeErrNotFound(t, "nothing owed", sessionsTestErr(s.SessionStepUpOwed(testCtx, sessionsTestRealm, "alice", now)))
	for i, id := range []string{"s1", "s2"} {
		p := sessionRiskTestProfile(id, "alice", "high", ",", now+int64(i))
		p.EndedBy, p.StepUpOwed, p.PolicyID, p.PolicyName = "step-up", true, "p-"+id, "policy "+id
		if err := s.SaveSessionRisk(testCtx, p, -1); err != nil {
			t.Fatal(err)
		}
	}
	owed, err := s.SessionStepUpOwed(testCtx, sessionsTestRealm, "alice", now)
	if err != nil || owed.SessionID != "s2" || owed.PolicyName != "policy s2" {
		t.Fatalf("owed %+v %v", owed, err)
	}
	mustBeErrNotFound(t, "owed in another realm", sessionsTestErr(s.SessionStepUpOwed(testCtx, sessionsTestOther, "alice", now)))
	mustBeErrNotFound(t, "owed by bob", sessionsTestErr(s.SessionStepUpOwed(testCtx, sessionsTestRealm, "bob", now)))
	if err := s.ClearSessionStepUp(testCtx, sessionsTestRealm, "alice"); err != nil {
		t.Fatal(err)
	}
	mustBeErrNotFound(t, "owed once given", sessionsTestErr(s.SessionStepUpOwed(testCtx, sessionsTestRealm, "alice", now)))
}

// The live refresh tokens of a session's clients are kept as refused
// before it ends, with the action that ended it, until they would have
// expired; rotated, revoked and expired ones, and other sessions', are
// not.
func testSessionRiskRefusedTokens(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now, hour := sessionsTestNow, sessionsTestHour
	sessionsTestMustCreate(t, s,
		sessionsTestSSO("sso", sessionsTestRealm, "alice", now-50, now+hour),
		sessionsTestOAuth("web", sessionsTestRealm, "alice", "sso", "web", now-40, now+hour),
		sessionsTestOAuth("cli", sessionsTestRealm, "alice", "sso", "cli", now-30, now+hour),
		sessionsTestOAuth("off", sessionsTestRealm, "alice", "", "web", now-20, now+30*hour),
		sessionsTestSSO("other", sessionsTestRealm, "alice", now-60, now+hour),
		sessionsTestOAuth("other-web", sessionsTestRealm, "alice", "other", "web", now-40, now+hour))
	sessionsTestMustCreateToken(t, s,
		sessionsTestToken("t-web", "alice", "web", "web", false, now-40, now+hour),
		sessionsTestToken("t-cli", "alice", "cli", "cli", false, now-30, now+2*hour),
		sessionsTestToken("t-old", "alice", "cli", "cli", false, now-30, now-1),
		sessionsTestToken("t-off", "alice", "web", "off", true, now-20, now+30*hour),
		sessionsTestToken("t-other", "alice", "web", "other-web", false, now-40, now+hour))
	if _, err := s.RotateRefreshToken(testCtx, sessionsTestRealm, store.HashToken("tok-t-web"),
		sessionsTestNext("t-web2", now, now+hour), now); err != nil {
		t.Fatal(err)
	}
	var n int64
	err := s.Tx(testCtx, func(tx *store.Store) error {
		var err error
		if n, err = tx.RefuseSessionTokens(testCtx, sessionsTestRealm, "sso", "step-up", now); err != nil {
			return err
		}
		_, err = tx.DeleteSession(testCtx, sessionsTestRealm, "sso", store.SessionSSO, now)
		return err
	})
	if err != nil || n != 2 {
		t.Fatalf("refused %d: %v", n, err)
	}
	for token, want := range map[string]string{"tok-t-web2": "step-up", "tok-t-cli": "step-up", "tok-t-web": "", "tok-t-old": "",
		"tok-t-off": "", "tok-t-other": ""} {
		got, err := s.RefusedToken(testCtx, sessionsTestRealm, store.HashToken(token))
		if want == "" {
			mustBeErrNotFound(t, token, err)
		} else if err != nil || got != want {
			t.Fatalf("%s: %q %v", token, got, err)
		}
	}
	mustBeErrNotFound(t, "in another realm", sessionsTestErr(s.RefusedToken(testCtx, sessionsTestOther, store.HashToken("tok-t-cli"))))
	if n, err := s.DeleteExpiredTokenRefusals(testCtx, now+hour); err != nil || n != 1 {
		t.Fatalf("expired %d %v", n, err)
	}
	mustBeErrNotFound(t, "expired", sessionsTestErr(s.RefusedToken(testCtx, sessionsTestRealm, store.HashToken("tok-t-web2"))))
	if _, err := s.RefusedToken(testCtx, sessionsTestRealm, store.HashToken("tok-t-cli")); err != nil {
		t.Fatal(err)
	}
}

// Events are listed newest first, filtered and paged, and outlined for
// the dashboards.
func testSessionRiskEvents(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	for i, e := range []*store.SessionRiskEvent{
		{ID: "e1", SessionID: "s1", UserID: "alice", Kind: "sign-in", Present: ","},
		{ID: "e2", SessionID: "s1", UserID: "alice", Kind: "refresh", ClientID: "web-app", IPAddress: "203.0.113.9",
			Present: ",new_ip,impossible_travel,", Action: "notify", PolicyID: "p1", PolicyName: "tell"},
		{ID: "e3", SessionID: "s2", UserID: "bob", Kind: "device-posture", Present: ",device_posture,"},
	} {
		e.RealmID, e.Detail, e.Score, e.Level, e.CreatedAt = sessionsTestRealm, `{"n":1}`, 10*i, "low", now+int64(i)
		if err := s.AddSessionRiskEvent(testCtx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetSessionRiskEvent(testCtx, sessionsTestRealm, "e2")
	if err != nil || got.PolicyName != "tell" || got.IPAddress != "203.0.113.9" || got.Detail != `{"n":1}` || got.Score != 10 {
		t.Fatalf("event %+v %v", got, err)
	}
	mustBeErrNotFound(t, "another realm's", sessionsTestErr(s.GetSessionRiskEvent(testCtx, sessionsTestOther, "e2")))
	ids := func(f store.SessionRiskEventFilter, first, max int) []string {
		t.Helper()
		list, err := s.ListSessionRiskEvents(testCtx, sessionsTestRealm, f, first, max)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, e := range list {
			out = append(out, e.ID)
		}
		return out
	}
	mustEqual(t, "all", ids(store.SessionRiskEventFilter{}, 0, 10), []string{"e3", "e2", "e1"})
	mustEqual(t, "a page", ids(store.SessionRiskEventFilter{}, 1, 1), []string{"e2"})
	mustEqual(t, "by session", ids(store.SessionRiskEventFilter{SessionID: "s1"}, 0, 10), []string{"e2", "e1"})
	mustEqual(t, "by user", ids(store.SessionRiskEventFilter{UserID: "bob"}, 0, 10), []string{"e3"})
	mustEqual(t, "by kind", ids(store.SessionRiskEventFilter{Kind: "refresh"}, 0, 10), []string{"e2"})
	mustEqual(t, "by signal", ids(store.SessionRiskEventFilter{Signal: "device_posture"}, 0, 10), []string{"e3"})
	mustEqual(t, "a window", ids(store.SessionRiskEventFilter{From: now + 1, To: now + 2}, 0, 10), []string{"e2"})
	var kinds []string
	err = s.EachSessionRiskEventOutline(testCtx, sessionsTestRealm, store.SessionRiskEventFilter{UserID: "alice"},
		func(kind, present, session, user string, at int64) { kinds = append(kinds, kind+present+session+user) })
	if err != nil || len(kinds) != 2 {
		t.Fatalf("outlines %v %v", kinds, err)
	}
}

// A baseline is inserted once and then swapped on its revision.
func testRiskBaselines(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	mustBeErrNotFound(t, "no baseline", sessionsTestErr(s.GetRiskBaseline(testCtx, sessionsTestRealm, "alice")))
	b := &store.RiskBaseline{UserID: "alice", RealmID: sessionsTestRealm, Metrics: `{"key_dwell_ms":{"n":1,"mean":90,"m2":0}}`,
		Revision: 1, UpdatedAt: 5}
	if err := s.SaveRiskBaseline(testCtx, b, -1); err != nil {
		t.Fatal(err)
	}
	mustBeErrConflict(t, "a second first", s.SaveRiskBaseline(testCtx, b, -1))
	next := *b
	next.Metrics, next.Revision, next.UpdatedAt = `{}`, 2, 6
	if err := s.SaveRiskBaseline(testCtx, &next, 1); err != nil {
		t.Fatal(err)
	}
	mustBeErrConflict(t, "a stale write", s.SaveRiskBaseline(testCtx, b, 1))
	got, err := s.GetRiskBaseline(testCtx, sessionsTestRealm, "alice")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "baseline", got, &next)
	mustBeErrNotFound(t, "another realm's", sessionsTestErr(s.GetRiskBaseline(testCtx, sessionsTestOther, "alice")))
}

// Profiles unchanged for the retention, and events older, go.
func testSessionRiskRetention(t *testing.T, s *store.Store) {
	sessionsTestFixture(t, s)
	now := sessionsTestNow
	for _, p := range []*store.SessionRisk{sessionRiskTestProfile("old", "alice", "low", ",", now-100),
		sessionRiskTestProfile("new", "alice", "low", ",", now)} {
		if err := s.SaveSessionRisk(testCtx, p, -1); err != nil {
			t.Fatal(err)
		}
		if err := s.AddSessionRiskEvent(testCtx, &store.SessionRiskEvent{ID: "e-" + p.SessionID, RealmID: sessionsTestRealm,
			SessionID: p.SessionID, UserID: "alice", Kind: "sign-in", Detail: "{}", Present: ",", Level: "low", CreatedAt: p.UpdatedAt}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DeleteStaleSessionRisks(testCtx, now-50); err != nil || n != 2 {
		t.Fatalf("deleted %d %v", n, err)
	}
	mustBeErrNotFound(t, "a stale profile", sessionsTestErr(s.GetSessionRisk(testCtx, sessionsTestRealm, "old", now)))
	mustBeErrNotFound(t, "a stale event", sessionsTestErr(s.GetSessionRiskEvent(testCtx, sessionsTestRealm, "e-old")))
	if _, err := s.GetSessionRisk(testCtx, sessionsTestRealm, "new", now); err != nil {
		t.Fatal(err)
	}
}
