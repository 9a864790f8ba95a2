package store

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// DeferMigrations opens a database that is behind as it is, lists what it
// lacks, and Migrate applies it; a new database is migrated all the same.
func TestDeferredMigrations(t *testing.T) {
	schema := storeTestSchema(t)
	migrations, err := parseMigrations(schema)
	if err != nil {
		t.Fatal(err)
	}
	latest := migrations[len(migrations)-1].version
	before, path := openBeforeVersion(t, latest)
	mustCreateRealm(t, before, testRealm(testRealmID, "acme", 1000))
	before.Close()

	s, err := Open(testCtx, Config{Path: path, Schema: schema, MasterKey: storeTestKey, DeferMigrations: true})
	if err != nil {
		t.Fatalf("open deferred: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(testCtx); v != latest-1 || s.LatestSchemaVersion() != latest {
		t.Fatalf("deferred open: version %d of %d, want %d", v, s.LatestSchemaVersion(), latest-1)
	}
	pending, err := s.PendingMigrations(testCtx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Version != latest || len(pending[0].Changes) == 0 || pending[0].About == "" {
		t.Fatalf("pending %+v", pending)
	}
	if err := s.Migrate(testCtx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if v, _ := s.SchemaVersion(testCtx); v != latest {
		t.Fatalf("version %d after Migrate, want %d", v, latest)
	}
	if pending, _ := s.PendingMigrations(testCtx); len(pending) != 0 {
		t.Fatalf("pending after Migrate: %+v", pending)
	}
	if _, err := s.GetRealm(testCtx, "acme"); err != nil {
		t.Fatalf("data after Migrate: %v", err)
	}

	t.Run("a new database is migrated", func(t *testing.T) {
		s, err := Open(testCtx, Config{Path: filepath.Join(t.TempDir(), "new.db"), Schema: schema, MasterKey: storeTestKey, DeferMigrations: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v, _ := s.SchemaVersion(testCtx); v != latest {
			t.Fatalf("a new database opened deferred is at %d, want %d", v, latest)
		}
	})

	t.Run("a wrong master key is told at once", func(t *testing.T) {
		before, path := openBeforeVersion(t, latest)
		before.Close()
		wrong := []byte(strings.Repeat("k", MasterKeySize))
		if _, err := Open(testCtx, Config{Path: path, Schema: schema, MasterKey: wrong, DeferMigrations: true}); err == nil {
			t.Fatal("a deferred open accepted the wrong master key")
		}
	})

	t.Run("a failed migration leaves the version before it", func(t *testing.T) {
		before, path := openBeforeVersion(t, latest)
		before.Close()
		broken := fmt.Sprintf("%s\n-- version %d\nTHIS IS NOT SQL;\n", schema, latest+1)
		s, err := Open(testCtx, Config{Path: path, Schema: broken, MasterKey: storeTestKey, DeferMigrations: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Migrate(testCtx); err == nil || !strings.Contains(err.Error(), fmt.Sprint(latest+1)) {
			t.Fatalf("Migrate over a broken migration: %v", err)
		}
		if v, _ := s.SchemaVersion(testCtx); v != latest {
			t.Fatalf("version %d after the failed migration, want %d", v, latest)
		}
	})
}

func TestDescribeStatement(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"CREATE TABLE authz_policies (\n id TEXT PRIMARY KEY)", "create table authz_policies"},
		{"CREATE TABLE IF NOT EXISTS x (a INTEGER)", "create table x"},
		{"CREATE UNIQUE INDEX authz_policies_name ON authz_policies (realm_id, name)", "create index authz_policies_name on authz_policies"},
		{"CREATE INDEX session_risk_realm ON session_risk (realm_id)", "create index session_risk_realm on session_risk"},
		{"ALTER TABLE realms ADD COLUMN terms_version TEXT NOT NULL DEFAULT ''", "alter table realms: add column terms_version"},
		{"ALTER TABLE broker_pending_links_v42 RENAME TO broker_pending_links", "alter table broker_pending_links_v42: rename to broker_pending_links"},
		{"ALTER TABLE users DROP COLUMN x", "alter table users: drop column x"},
		{"DROP INDEX signin_flows_realm", "drop index signin_flows_realm"},
		{"DROP TABLE IF EXISTS broker_pending_links", "drop table broker_pending_links"},
		{"INSERT INTO broker_pending_links_v42 SELECT * FROM broker_pending_links", "insert into broker_pending_links_v42"},
		{"UPDATE users SET password_changed_at = created_at", "update users"},
		{"DELETE FROM clients WHERE x = 1", "delete from clients"},
		{"PRAGMA foreign_keys = OFF", "pragma foreign_keys ="},
	} {
		if got := describeStatement(tc.sql); got != tc.want {
			t.Errorf("describeStatement(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// Comments are no statements, an apostrophe in one opens no string, and a
// semicolon in a string cuts nothing.
func TestSummarizeMigration(t *testing.T) {
	about, changes := summarizeMigration(`-- Policies: each permits or denies;
-- the realm's settings.
CREATE TABLE p (
    id TEXT PRIMARY KEY,    -- the row's id
    note TEXT NOT NULL DEFAULT 'a;b'
);
UPDATE p SET note = 'it''s; fine';
`)
	if about != "Policies: each permits or denies; the realm's settings." {
		t.Errorf("about %q", about)
	}
	if want := []string{"create table p", "update p"}; !slices.Equal(changes, want) {
		t.Errorf("changes %q, want %q", changes, want)
	}
	// Every migration of the schema says what it changes.
	migrations, err := parseMigrations(storeTestSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations {
		if _, changes := summarizeMigration(m.sql); len(changes) == 0 {
			t.Errorf("migration %d: no change described", m.version)
		}
	}
}
