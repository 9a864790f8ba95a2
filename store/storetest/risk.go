package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/idenplane/idenplane/store"
)

func riskSuite() []subTest {
	return []subTest{
		{"RiskSettingsDefaultsAndPut", testRiskSettingsDefaultsAndPut},
		{"RiskPoliciesCreateAndList", testRiskPoliciesCreateAndList},
		{"RiskPolicyUpdateToggleAndPriority", testRiskPolicyUpdateToggleAndPriority},
		{"RiskPolicyDelete", testRiskPolicyDelete},
		{"RiskAssessmentRoundTrip", testRiskAssessmentRoundTrip},
		{"RiskAssessmentFilters", testRiskAssessmentFilters},
		{"RiskAssessmentPaging", testRiskAssessmentPaging},
		{"RiskDashboardCounts", testRiskDashboardCounts},
		{"RiskHistoryAndSucceeded", testRiskHistoryAndSucceeded},
		{"RiskCascade", testRiskCascade},
	}
}

const (
	riskTestRealm = "realm-risk"
	riskTestOther = "realm-risk-other"
)

// riskTestFixture makes realm acme with alice and bob, and realm other
// with carol.
func riskTestFixture(t *testing.T, s *store.Store) {
	t.Helper()
	mustCreateRealm(t, s, testRealm(riskTestRealm, "acme", 1000))
	mustCreateRealm(t, s, testRealm(riskTestOther, "other", 2000))
	mustCreateUser(t, s, testUser("alice", riskTestRealm, "alice", ""))
	mustCreateUser(t, s, testUser("bob", riskTestRealm, "bob", ""))
	mustCreateUser(t, s, testUser("carol", riskTestOther, "carol", ""))
}

// riskTestPolicy is a policy with every field set away from its zero
// value.
func riskTestPolicy(id, realmID, name string, priority int, createdAt int64) *store.RiskPolicy {
	return &store.RiskPolicy{ID: id, RealmID: realmID, Name: name, Description: "the policy " + name, Enabled: true,
		Priority: priority, Conditions: `{"signals":["new_device"],"levels":["medium","high"]}`, Action: "mfa",
		CreatedAt: createdAt, UpdatedAt: createdAt + 1}
}

func riskTestCreatePolicy(t *testing.T, s *store.Store, p *store.RiskPolicy) *store.RiskPolicy {
	t.Helper()
	if err := s.CreateRiskPolicy(testCtx, p); err != nil {
		t.Fatalf("create risk policy %s: %v", p.Name, err)
	}
	return p
}

func riskTestPolicyIDs(t *testing.T, s *store.Store, realmID string) []string {
	t.Helper()
	list, err := s.ListRiskPolicies(testCtx, realmID)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, p := range list {
		ids = append(ids, p.ID)
	}
	return ids
}

func riskTestGetPolicy(t *testing.T, s *store.Store, realmID, id string) *store.RiskPolicy {
	t.Helper()
	p, err := s.GetRiskPolicy(testCtx, realmID, id)
	if err != nil {
		t.Fatalf("get risk policy %s: %v", id, err)
	}
	return p
}

// riskTestAssessment is an assessment of user with every field set away
// from its zero value; present is as the store keeps it (",a,b,").
func riskTestAssessment(id, realmID, user, level, present string, at int64) *store.RiskAssessment {
	return &store.RiskAssessment{ID: id, RealmID: realmID, UserID: user, FlowID: "flow-" + id, Kind: "oidc", ClientID: "web",
		IPAddress: "198.51.100.7", Network: "198.51.100.0/24", DeviceHash: bytes.Repeat([]byte{byte(len(id))}, 32),
		UserAgent: "Firefox on Linux", Country: "FR", Located: true, LatitudeE6: 48_850_000, LongitudeE6: -2_350_000,
		Score: 20, Level: level, Signals: `[{"signal":"new_device","state":"present","weight":20,"contribution":20}]`,
		Present: present, Weights: `{"weights":{"new_device":20},"thresholds":{"medium":30,"high":60,"critical":85}}`,
		PolicyID: "policy-" + id, PolicyName: "policy of " + id, Action: "allow", Outcome: store.RiskPending, CreatedAt: at}
}

func riskTestAdd(t *testing.T, s *store.Store, a *store.RiskAssessment) *store.RiskAssessment {
	t.Helper()
	if err := s.AddRiskAssessment(testCtx, a); err != nil {
		t.Fatalf("add risk assessment %s: %v", a.ID, err)
	}
	return a
}

func riskTestIDs(list []*store.RiskAssessment) []string {
	ids := []string{}
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	return ids
}

func riskTestList(t *testing.T, s *store.Store, realmID string, f store.RiskFilter, first, max int) []string {
	t.Helper()
	list, err := s.ListRiskAssessments(testCtx, realmID, f, first, max)
	if err != nil {
		t.Fatalf("list risk assessments %+v: %v", f, err)
	}
	return riskTestIDs(list)
}

func testRiskSettingsDefaultsAndPut(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	// A realm that never wrote its settings keeps the defaults.
	_, err := s.RiskSettings(testCtx, riskTestRealm)
	mustBeErrNotFound(t, "settings never written", err)

	const first = `{"weights":{"new_device":35},"allowList":["192.0.2.0/24"]}`
	if err := s.PutRiskSettings(testCtx, riskTestRealm, first, 100); err != nil {
		t.Fatal(err)
	}
	got, err := s.RiskSettings(testCtx, riskTestRealm)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "settings written", got, first)
	// Written again: replaced whole, not merged.
	const second = `{"denyList":["198.51.100.66"]}`
	if err := s.PutRiskSettings(testCtx, riskTestRealm, second, 200); err != nil {
		t.Fatal(err)
	}
	got, err = s.RiskSettings(testCtx, riskTestRealm)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "settings written again", got, second)
	// Each realm has its own.
	_, err = s.RiskSettings(testCtx, riskTestOther)
	mustBeErrNotFound(t, "another realm's settings", err)
	if err := s.PutRiskSettings(testCtx, riskTestOther, first, 300); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RiskSettings(testCtx, riskTestRealm); err != nil || got != second {
		t.Fatalf("settings after another realm's write: %q %v", got, err)
	}
	// Settings of a realm that does not exist are refused.
	if err := s.PutRiskSettings(testCtx, "no-such-realm", first, 400); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("settings of an unknown realm: %v, want ErrNotFound", err)
	}
}

func testRiskPoliciesCreateAndList(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	mustEqual(t, "policies of a realm without any", riskTestPolicyIDs(t, s, riskTestRealm), []string{})

	late := riskTestCreatePolicy(t, s, riskTestPolicy("p-late", riskTestRealm, "late", 5, 300))
	early := riskTestCreatePolicy(t, s, riskTestPolicy("p-early", riskTestRealm, "early", 5, 100))
	first := riskTestCreatePolicy(t, s, riskTestPolicy("p-first", riskTestRealm, "first", 1, 400))
	off := riskTestPolicy("p-off", riskTestRealm, "off", 0, 200)
	off.Enabled, off.Description, off.Conditions, off.Action = false, "", "{}", "deny"
	riskTestCreatePolicy(t, s, off)
	// Same priority and creation time: the ID decides, so the order is stable.
	tieB := riskTestCreatePolicy(t, s, riskTestPolicy("p-tie-b", riskTestRealm, "tie b", 7, 500))
	tieA := riskTestCreatePolicy(t, s, riskTestPolicy("p-tie-a", riskTestRealm, "tie a", 7, 500))
	riskTestCreatePolicy(t, s, riskTestPolicy("p-far", riskTestOther, "first", 0, 50)) // its name is free in another realm

	// Disabled policies are listed too: the module skips them.
	mustEqual(t, "policies in the order they decide", riskTestPolicyIDs(t, s, riskTestRealm),
		[]string{"p-off", first.ID, early.ID, late.ID, tieA.ID, tieB.ID})
	mustEqual(t, "another realm's policies", riskTestPolicyIDs(t, s, riskTestOther), []string{"p-far"})

	list, err := s.ListRiskPolicies(testCtx, riskTestRealm)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "a listed policy", list[0], off)
	mustEqual(t, "a listed policy", list[2], early)
	mustEqual(t, "a policy read back", riskTestGetPolicy(t, s, riskTestRealm, late.ID), late)
	_, err = s.GetRiskPolicy(testCtx, riskTestOther, late.ID)
	mustBeErrNotFound(t, "a policy read from another realm", err)
	_, err = s.GetRiskPolicy(testCtx, riskTestRealm, "p-none")
	mustBeErrNotFound(t, "an unknown policy", err)

	// A name the realm has: a conflict on the name, and nothing stored.
	err = s.CreateRiskPolicy(testCtx, riskTestPolicy("p-dup", riskTestRealm, "early", 9, 600))
	mustBeErrConflict(t, "a second policy named early", err)
	var conflict *store.ConflictError
	if !errors.As(err, &conflict) || conflict.Column != "name" {
		t.Fatalf("the conflict names %+v, want the column name", conflict)
	}
	mustBeErrConflict(t, "a policy ID taken", s.CreateRiskPolicy(testCtx, riskTestPolicy(late.ID, riskTestRealm, "other name", 9, 600)))
	mustEqual(t, "policies after refused writes", len(riskTestPolicyIDs(t, s, riskTestRealm)), 6)
	if err := s.CreateRiskPolicy(testCtx, riskTestPolicy("p-lost", "no-such-realm", "lost", 0, 1)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a policy of an unknown realm: %v, want ErrNotFound", err)
	}
}

func testRiskPolicyUpdateToggleAndPriority(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	a := riskTestCreatePolicy(t, s, riskTestPolicy("p-a", riskTestRealm, "a", 1, 100))
	b := riskTestCreatePolicy(t, s, riskTestPolicy("p-b", riskTestRealm, "b", 2, 200))
	c := riskTestCreatePolicy(t, s, riskTestPolicy("p-c", riskTestRealm, "c", 3, 300))

	// A whole replacement: every field but the realm and the creation time.
	changed := &store.RiskPolicy{ID: a.ID, RealmID: riskTestRealm, Name: "a renamed", Description: "new words", Enabled: true,
		Priority: 1, Conditions: `{"countries":["JP"]}`, Action: "notify", CreatedAt: 999, UpdatedAt: 1000}
	if err := s.UpdateRiskPolicy(testCtx, changed); err != nil {
		t.Fatal(err)
	}
	want := *changed
	want.CreatedAt = a.CreatedAt
	mustEqual(t, "the policy replaced", riskTestGetPolicy(t, s, riskTestRealm, a.ID), &want)

	// Toggled off (the module's toggle writes the policy with Enabled flipped).
	off := riskTestGetPolicy(t, s, riskTestRealm, b.ID)
	off.Enabled, off.UpdatedAt = false, 1100
	if err := s.UpdateRiskPolicy(testCtx, off); err != nil {
		t.Fatal(err)
	}
	if got := riskTestGetPolicy(t, s, riskTestRealm, b.ID); got.Enabled || got.UpdatedAt != 1100 || got.Name != "b" || got.Action != "mfa" {
		t.Fatalf("toggled off: %+v", got)
	}
	off.Enabled, off.UpdatedAt = true, 1200
	if err := s.UpdateRiskPolicy(testCtx, off); err != nil {
		t.Fatal(err)
	}
	if got := riskTestGetPolicy(t, s, riskTestRealm, b.ID); !got.Enabled || got.UpdatedAt != 1200 {
		t.Fatalf("toggled on: %+v", got)
	}

	// A new priority moves it in the order.
	mustEqual(t, "order before", riskTestPolicyIDs(t, s, riskTestRealm), []string{a.ID, b.ID, c.ID})
	last := riskTestGetPolicy(t, s, riskTestRealm, c.ID)
	last.Priority, last.UpdatedAt = -5, 1300
	if err := s.UpdateRiskPolicy(testCtx, last); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "order after c's priority -5", riskTestPolicyIDs(t, s, riskTestRealm), []string{c.ID, a.ID, b.ID})
	a2 := riskTestGetPolicy(t, s, riskTestRealm, a.ID)
	a2.Priority = 10
	if err := s.UpdateRiskPolicy(testCtx, a2); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "order after a's priority 10", riskTestPolicyIDs(t, s, riskTestRealm), []string{c.ID, b.ID, a.ID})

	// A rename onto another policy's name is a conflict, and changes nothing.
	clash := riskTestGetPolicy(t, s, riskTestRealm, b.ID)
	clash.Name, clash.Action = "c", "deny"
	mustBeErrConflict(t, "renamed onto c", s.UpdateRiskPolicy(testCtx, clash))
	if got := riskTestGetPolicy(t, s, riskTestRealm, b.ID); got.Name != "b" || got.Action != "mfa" {
		t.Fatalf("after a refused rename: %+v", got)
	}
	// Unknown, or of another realm: not found, and nothing written.
	ghost := riskTestPolicy("p-ghost", riskTestRealm, "ghost", 0, 1)
	mustBeErrNotFound(t, "update of an unknown policy", s.UpdateRiskPolicy(testCtx, ghost))
	stray := riskTestGetPolicy(t, s, riskTestRealm, b.ID)
	stray.RealmID, stray.Name = riskTestOther, "moved"
	mustBeErrNotFound(t, "update through another realm", s.UpdateRiskPolicy(testCtx, stray))
	if got := riskTestGetPolicy(t, s, riskTestRealm, b.ID); got.Name != "b" || got.RealmID != riskTestRealm {
		t.Fatalf("after an update through another realm: %+v", got)
	}
	mustEqual(t, "another realm's policies", riskTestPolicyIDs(t, s, riskTestOther), []string{})
}

func testRiskPolicyDelete(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	a := riskTestCreatePolicy(t, s, riskTestPolicy("p-a", riskTestRealm, "a", 1, 100))
	b := riskTestCreatePolicy(t, s, riskTestPolicy("p-b", riskTestRealm, "b", 2, 200))
	decided := riskTestAssessment("decided", riskTestRealm, "alice", "medium", ",new_device,", 1000)
	decided.PolicyID, decided.PolicyName, decided.Action = a.ID, a.Name, a.Action
	riskTestAdd(t, s, decided)

	mustBeErrNotFound(t, "delete through another realm", s.DeleteRiskPolicy(testCtx, riskTestOther, a.ID))
	mustEqual(t, "policies after a delete through another realm", riskTestPolicyIDs(t, s, riskTestRealm), []string{a.ID, b.ID})
	if err := s.DeleteRiskPolicy(testCtx, riskTestRealm, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetRiskPolicy(testCtx, riskTestRealm, a.ID)
	mustBeErrNotFound(t, "a deleted policy", err)
	mustEqual(t, "policies after the delete", riskTestPolicyIDs(t, s, riskTestRealm), []string{b.ID})
	mustBeErrNotFound(t, "a second delete", s.DeleteRiskPolicy(testCtx, riskTestRealm, a.ID))
	// The assessments it decided keep its ID and name.
	got, err := s.GetRiskAssessment(testCtx, riskTestRealm, decided.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.PolicyID != a.ID || got.PolicyName != "a" || got.Action != "mfa" {
		t.Fatalf("an assessment of a deleted policy: %+v", got)
	}
	// Its name is free again.
	riskTestCreatePolicy(t, s, riskTestPolicy("p-a2", riskTestRealm, "a", 0, 300))
	mustEqual(t, "policies after the name is taken again", riskTestPolicyIDs(t, s, riskTestRealm), []string{"p-a2", b.ID})
}

func testRiskAssessmentRoundTrip(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	full := riskTestAdd(t, s, riskTestAssessment("full", riskTestRealm, "alice", "high", ",new_device,new_country,", 1000))
	got, err := s.GetRiskAssessment(testCtx, riskTestRealm, full.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "an assessment read back", got, full)

	// A password grant keeps no device cookie: no hash, read back as none;
	// a sign-in without coordinates and no policy: zero values kept.
	bare := riskTestAssessment("bare", riskTestRealm, "bob", "low", ",", 2000)
	bare.DeviceHash, bare.Country, bare.Located, bare.LatitudeE6, bare.LongitudeE6 = nil, "", false, 0, 0
	bare.PolicyID, bare.PolicyName, bare.Kind, bare.ClientID = "", "", "password-grant", "cli"
	riskTestAdd(t, s, bare)
	got, err = s.GetRiskAssessment(testCtx, riskTestRealm, bare.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.DeviceHash != nil {
		t.Fatalf("an assessment without a device hash reads back %x", got.DeviceHash)
	}
	mustEqual(t, "an assessment without a device read back", got, bare)

	// By its flow.
	got, err = s.RiskAssessmentOfFlow(testCtx, riskTestRealm, "flow-full")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "the assessment of a flow", got, full)
	_, err = s.RiskAssessmentOfFlow(testCtx, riskTestOther, "flow-full")
	mustBeErrNotFound(t, "a flow's assessment through another realm", err)
	_, err = s.RiskAssessmentOfFlow(testCtx, riskTestRealm, "flow-none")
	mustBeErrNotFound(t, "a flow without an assessment", err)

	// Through another realm, unknown, a taken ID, an unknown user.
	_, err = s.GetRiskAssessment(testCtx, riskTestOther, full.ID)
	mustBeErrNotFound(t, "an assessment through another realm", err)
	_, err = s.GetRiskAssessment(testCtx, riskTestRealm, "none")
	mustBeErrNotFound(t, "an unknown assessment", err)
	mustBeErrConflict(t, "an assessment ID taken", s.AddRiskAssessment(testCtx, riskTestAssessment(full.ID, riskTestRealm, "bob", "low", ",", 3000)))
	if err := s.AddRiskAssessment(testCtx, riskTestAssessment("lost", riskTestRealm, "nobody", "low", ",", 3000)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an assessment of an unknown user: %v, want ErrNotFound", err)
	}
	mustEqual(t, "assessments after refused writes", riskTestList(t, s, riskTestRealm, store.RiskFilter{}, 0, 10), []string{bare.ID, full.ID})
}

// riskTestSet adds the assessments the filters are tried on: acme's at
// 1000 to 1600, one of another realm's.
func riskTestSet(t *testing.T, s *store.Store) {
	t.Helper()
	for _, a := range []*store.RiskAssessment{
		riskTestAssessment("a1", riskTestRealm, "alice", "low", ",", 1000),
		riskTestAssessment("a2", riskTestRealm, "alice", "medium", ",new_device,new_ip,", 1100),
		riskTestAssessment("b1", riskTestRealm, "bob", "critical", ",new_country,impossible_travel,", 1200),
		riskTestAssessment("a3", riskTestRealm, "alice", "critical", ",ip_denylisted,", 1300),
		riskTestAssessment("b2", riskTestRealm, "bob", "medium", ",user_failures,new_ip,", 1400),
		riskTestAssessment("a4", riskTestRealm, "alice", "high", ",new_device,new_country,", 1500),
		riskTestAssessment("b3", riskTestRealm, "bob", "low", ",", 1600),
		riskTestAssessment("c1", riskTestOther, "carol", "medium", ",new_device,new_ip,", 1250),
	} {
		riskTestAdd(t, s, a)
	}
}

func testRiskAssessmentFilters(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	riskTestSet(t, s)
	for _, tc := range []struct {
		name string
		f    store.RiskFilter
		want []string
	}{
		{"all, newest first", store.RiskFilter{}, []string{"b3", "a4", "b2", "a3", "b1", "a2", "a1"}},
		{"by user", store.RiskFilter{UserID: "alice"}, []string{"a4", "a3", "a2", "a1"}},
		{"by a user of another realm", store.RiskFilter{UserID: "carol"}, []string{}},
		{"by level", store.RiskFilter{Level: "critical"}, []string{"a3", "b1"}},
		{"by a level none has", store.RiskFilter{Level: "extreme"}, []string{}},
		{"by signal", store.RiskFilter{Signal: "new_ip"}, []string{"b2", "a2"}},
		{"by the last signal of a list", store.RiskFilter{Signal: "impossible_travel"}, []string{"b1"}},
		// No list holds ip_failures; user_failures, whose name ends with it, is another signal.
		{"by a signal that ends another's name", store.RiskFilter{Signal: "ip_failures"}, []string{}},
		{"from, included", store.RiskFilter{From: 1300}, []string{"b3", "a4", "b2", "a3"}},
		{"to, excluded", store.RiskFilter{To: 1300}, []string{"b1", "a2", "a1"}},
		{"from and to", store.RiskFilter{From: 1100, To: 1500}, []string{"b2", "a3", "b1", "a2"}},
		{"an empty range", store.RiskFilter{From: 1250, To: 1250}, []string{}},
		{"user, level and signal", store.RiskFilter{UserID: "alice", Level: "high", Signal: "new_device"}, []string{"a4"}},
		{"user and range", store.RiskFilter{UserID: "bob", From: 1200, To: 1600}, []string{"b2", "b1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustEqual(t, fmt.Sprintf("assessments %+v", tc.f), riskTestList(t, s, riskTestRealm, tc.f, 0, 50), tc.want)
		})
	}
	mustEqual(t, "another realm's", riskTestList(t, s, riskTestOther, store.RiskFilter{}, 0, 50), []string{"c1"})
	mustEqual(t, "another realm's by signal", riskTestList(t, s, riskTestOther, store.RiskFilter{Signal: "new_device"}, 0, 50), []string{"c1"})
}

func testRiskAssessmentPaging(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	riskTestSet(t, s)
	// Two at the same time: the greater ID first, on every page.
	riskTestAdd(t, s, riskTestAssessment("a5", riskTestRealm, "alice", "low", ",", 1600))
	all := []string{"b3", "a5", "a4", "b2", "a3", "b1", "a2", "a1"}
	mustEqual(t, "all", riskTestList(t, s, riskTestRealm, store.RiskFilter{}, 0, 50), all)
	var paged []string
	for first := 0; first < 10; first += 3 {
		page := riskTestList(t, s, riskTestRealm, store.RiskFilter{}, first, 3)
		if want := min(3, max(0, len(all)-first)); len(page) != want {
			t.Fatalf("page at %d: %v, want %d", first, page, want)
		}
		paged = append(paged, page...)
	}
	mustEqual(t, "the pages one after the other", paged, all)
	mustEqual(t, "a page of a filter", riskTestList(t, s, riskTestRealm, store.RiskFilter{UserID: "alice"}, 1, 2), []string{"a4", "a3"})
	mustEqual(t, "a page past the end", riskTestList(t, s, riskTestRealm, store.RiskFilter{}, 8, 3), []string{})
	mustEqual(t, "max 1", riskTestList(t, s, riskTestRealm, store.RiskFilter{Level: "medium"}, 0, 1), []string{"b2"})
}

func testRiskDashboardCounts(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	riskTestSet(t, s)
	count := func(f store.RiskFilter) (int, map[string]int, map[string]int) {
		t.Helper()
		total, levels, present := 0, map[string]int{}, map[string]int{}
		err := s.EachRiskOutline(testCtx, riskTestRealm, f, func(level, p string) {
			total++
			levels[level]++
			present[p]++
		})
		if err != nil {
			t.Fatal(err)
		}
		return total, levels, present
	}
	total, levels, present := count(store.RiskFilter{})
	mustEqual(t, "total", total, 7)
	mustEqual(t, "by level", levels, map[string]int{"low": 2, "medium": 2, "high": 1, "critical": 2})
	mustEqual(t, "signals as stored", present, map[string]int{",": 2, ",new_device,new_ip,": 1, ",new_country,impossible_travel,": 1,
		",ip_denylisted,": 1, ",user_failures,new_ip,": 1, ",new_device,new_country,": 1})
	// Over a range: from included, to excluded.
	total, levels, _ = count(store.RiskFilter{From: 1200, To: 1500})
	mustEqual(t, "total over 1200-1500", total, 3)
	mustEqual(t, "by level over 1200-1500", levels, map[string]int{"critical": 2, "medium": 1})
	total, levels, present = count(store.RiskFilter{From: 5000})
	if total != 0 || len(levels) != 0 || len(present) != 0 {
		t.Fatalf("a range without assessments: %d %v %v", total, levels, present)
	}
	// Another realm counts its own.
	n := 0
	if err := s.EachRiskOutline(testCtx, riskTestOther, store.RiskFilter{}, func(level, p string) {
		n++
		if level != "medium" || p != ",new_device,new_ip," {
			t.Errorf("another realm's outline: %s %s", level, p)
		}
	}); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "another realm's total", n, 1)
}

func testRiskHistoryAndSucceeded(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	riskTestSet(t, s)
	history := func(user string, limit int) []string {
		t.Helper()
		h, err := s.RiskHistory(testCtx, user, limit)
		if err != nil {
			t.Fatal(err)
		}
		return riskTestIDs(h)
	}
	// Pending sign-ins are no history.
	mustEqual(t, "history with every sign-in pending", history("alice", 50), []string{})
	for _, id := range []string{"a1", "a3", "a4", "b2", "c1"} {
		if err := s.SucceedRiskAssessment(testCtx, id); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetRiskAssessment(testCtx, riskTestRealm, "a3")
	if err != nil {
		t.Fatal(err)
	}
	want := riskTestAssessment("a3", riskTestRealm, "alice", "critical", ",ip_denylisted,", 1300)
	want.Outcome = store.RiskSucceeded
	mustEqual(t, "a succeeded assessment", got, want)
	if got, _ := s.GetRiskAssessment(testCtx, riskTestRealm, "a2"); got.Outcome != store.RiskPending {
		t.Fatalf("a2 untouched: %+v", got)
	}
	// The user's own succeeded sign-ins, newest first, at most limit.
	mustEqual(t, "alice's history", history("alice", 50), []string{"a4", "a3", "a1"})
	mustEqual(t, "alice's history, 2", history("alice", 2), []string{"a4", "a3"})
	mustEqual(t, "bob's history", history("bob", 50), []string{"b2"})
	mustEqual(t, "carol's history", history("carol", 50), []string{"c1"})
	h, err := s.RiskHistory(testCtx, "alice", 1)
	if err != nil || len(h) != 1 {
		t.Fatalf("history %v %v", h, err)
	}
	mustEqual(t, "a sign-in of the history", h[0].DeviceHash, bytes.Repeat([]byte{2}, 32))
	// Marked twice: still succeeded, once in the history.
	if err := s.SucceedRiskAssessment(testCtx, "a4"); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "alice's history after a4 marked again", history("alice", 50), []string{"a4", "a3", "a1"})
	// An unknown assessment: nothing to mark, nothing changed.
	if err := s.SucceedRiskAssessment(testCtx, "none"); err != nil {
		t.Fatalf("marking an unknown assessment: %v", err)
	}
	mustEqual(t, "bob's history after an unknown mark", history("bob", 50), []string{"b2"})
	// A late success joins the history in its place by time.
	if err := s.SucceedRiskAssessment(testCtx, "a2"); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "alice's history after a2", history("alice", 50), []string{"a4", "a3", "a2", "a1"})
	mustEqual(t, "succeeded in the list", riskTestList(t, s, riskTestRealm, store.RiskFilter{UserID: "alice"}, 0, 50),
		[]string{"a4", "a3", "a2", "a1"})
}

func testRiskCascade(t *testing.T, s *store.Store) {
	riskTestFixture(t, s)
	riskTestSet(t, s)
	if err := s.PutRiskSettings(testCtx, riskTestRealm, `{}`, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRiskSettings(testCtx, riskTestOther, `{"maxSpeedKmh":900}`, 1); err != nil {
		t.Fatal(err)
	}
	riskTestCreatePolicy(t, s, riskTestPolicy("p-acme", riskTestRealm, "acme's", 0, 1))
	riskTestCreatePolicy(t, s, riskTestPolicy("p-other", riskTestOther, "other's", 0, 1))

	// A deleted user's assessments go with the user.
	if err := s.DeleteUser(testCtx, riskTestRealm, "bob"); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "assessments after bob's deletion", riskTestList(t, s, riskTestRealm, store.RiskFilter{}, 0, 50),
		[]string{"a4", "a3", "a2", "a1"})
	_, err := s.GetRiskAssessment(testCtx, riskTestRealm, "b1")
	mustBeErrNotFound(t, "a deleted user's assessment", err)

	// A deleted realm's settings, policies and assessments go with it.
	if err := s.DeleteRealm(testCtx, "acme"); err != nil {
		t.Fatal(err)
	}
	_, err = s.RiskSettings(testCtx, riskTestRealm)
	mustBeErrNotFound(t, "a deleted realm's settings", err)
	mustEqual(t, "a deleted realm's policies", riskTestPolicyIDs(t, s, riskTestRealm), []string{})
	mustEqual(t, "a deleted realm's assessments", riskTestList(t, s, riskTestRealm, store.RiskFilter{}, 0, 50), []string{})
	h, err := s.RiskHistory(testCtx, "alice", 50)
	if err != nil || len(h) != 0 {
		t.Fatalf("a deleted realm's user's history: %v %v", h, err)
	}
	// The other realm keeps its own.
	if got, err := s.RiskSettings(testCtx, riskTestOther); err != nil || got != `{"maxSpeedKmh":900}` {
		t.Fatalf("the other realm's settings: %q %v", got, err)
	}
	mustEqual(t, "the other realm's policies", riskTestPolicyIDs(t, s, riskTestOther), []string{"p-other"})
	mustEqual(t, "the other realm's assessments", riskTestList(t, s, riskTestOther, store.RiskFilter{}, 0, 50), []string{"c1"})
}
