package store

import "testing"

// Version 38 leaves the realms made before it without impersonation, for
// fifteen minutes when turned on.
func TestImpersonationMigration(t *testing.T) {
	before, path := openBeforeVersion(t, 38)
	createRealmAtOldSchema(t, before, testRealm("r1", "acme", 1000))
	before.Close()

	s := storeTestOpen(t, path, storeTestKey)
	r, err := s.GetRealm(testCtx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if r.ImpersonationEnabled || r.ImpersonationLifetime != 900 {
		t.Fatalf("migrated realm: impersonation %t for %d s", r.ImpersonationEnabled, r.ImpersonationLifetime)
	}
}
