package storetest

import (
	"testing"

	"github.com/idenplane/idenplane/store"
)

// adminLoginFailureSuite is the conformance tests of the admin login's
// throttle records.
func adminLoginFailureSuite() []subTest {
	return []subTest{
		{"AdminLoginFailuresKeptAndForgotten", testAdminLoginFailures},
	}
}

func testAdminLoginFailures(t *testing.T, s *store.Store) {
	list := func(since int64) []store.AdminLoginFailure {
		t.Helper()
		got, err := s.AdminLoginFailures(testCtx, since)
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
		if err := s.RecordAdminLoginFailures(testCtx, f.keys, f.at, 0); err != nil {
			t.Fatal(err)
		}
	}
	mustEqual(t, "failures after 100", list(100), []store.AdminLoginFailure{{KeyHash: "ip", FailedAt: 200}, {KeyHash: "ip", FailedAt: 300}, {KeyHash: "v", FailedAt: 300}})
	if err := s.ClearAdminLoginFailures(testCtx, "ip"); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "failures once ip is cleared", list(0), []store.AdminLoginFailure{{KeyHash: "u", FailedAt: 100}, {KeyHash: "v", FailedAt: 300}})
	// Writing forgets what is past the window.
	if err := s.RecordAdminLoginFailures(testCtx, []string{"w"}, 400, 100); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "failures after forgetting up to 100", list(0), []store.AdminLoginFailure{{KeyHash: "v", FailedAt: 300}, {KeyHash: "w", FailedAt: 400}})
}
