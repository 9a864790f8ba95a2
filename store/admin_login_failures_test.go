package store

import "testing"

// adminLoginFailureSuite is the conformance tests of the admin login's
// throttle records.
func adminLoginFailureSuite() []suiteTest {
	return []suiteTest{
		{"AdminLoginFailuresKeptAndForgotten", suiteAdminLoginFailures},
	}
}

func suiteAdminLoginFailures(t *testing.T, s *Store) {
	list := func(since int64) []AdminLoginFailure {
		t.Helper()
		got, err := s.AdminLoginFailures(suiteCtx, since)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := list(0); len(got) != 0 {
		t.Fatalf("failures of a new database: %+v", got)
	}
	for _, f := range []struct {
		keys []string
		at   int64
	}{{[]string{"u", "ip"}, 100}, {[]string{"ip"}, 200}, {[]string{"v", "ip"}, 300}} {
		if err := s.RecordAdminLoginFailures(suiteCtx, f.keys, f.at, 0); err != nil {
			t.Fatal(err)
		}
	}
	suiteMustEqual(t, "failures after 100", list(100), []AdminLoginFailure{{"ip", 200}, {"ip", 300}, {"v", 300}})
	if err := s.ClearAdminLoginFailures(suiteCtx, "ip"); err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "failures once ip is cleared", list(0), []AdminLoginFailure{{"u", 100}, {"v", 300}})
	// Writing forgets what is past the window.
	if err := s.RecordAdminLoginFailures(suiteCtx, []string{"w"}, 400, 100); err != nil {
		t.Fatal(err)
	}
	suiteMustEqual(t, "failures after forgetting up to 100", list(0), []AdminLoginFailure{{"v", 300}, {"w", 400}})
}
