package app

import (
	"net/http"

	"github.com/idenplane/idenplane/app/openapi"
	"github.com/idenplane/idenplane/app/upgrade"
)

// describeUpgrade describes the upgrade and rollback of the database
// (docs/upgrade.md).
func describeUpgrade(describe func(method, path string, o openapi.Op)) {
	const base = "/admin/upgrade"
	paging := []openapi.Param{
		{Name: "first", Description: "How many of the newest to skip.", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
		{Name: "max", Description: "How many to answer (50 unless given, at most 1000).", Schema: openapi.Schema{"type": "integer", "minimum": 1}},
	}
	actor := map[string]any{"type": "api-key", "name": "bootstrap", "ip": "192.0.2.1"}
	upgraded := map[string]any{"id": "0b5c…", "status": "succeeded", "fromVersion": 50, "toVersion": 51, "binaryVersion": "1.4.0",
		"startedTimestamp": int64(1767225600000), "finishedTimestamp": int64(1767225601200), "startedBy": actor,
		"snapshot": "/var/lib/idenplane/idenplane.db.pre-upgrade-50-20260101T000000.000Z.db", "snapshotBytes": 4194304}
	describe(http.MethodPost, base, openapi.Op{Summary: "Upgrade the database to this binary's schema",
		Description: "Checks the database (as pre-validation does: 409 `invalid_state` naming what failed), writes a snapshot " +
			"beside it (SQLite's `VACUUM INTO`, fsynced), applies the pending migrations, records each step in the history " +
			"file, then serves the whole API again. `targetVersion` is this binary's schema version (a number, or a string " +
			"of digits) or its release; any other is a 400 saying which it may be. 409 when nothing is pending or an upgrade " +
			"or rollback is under way; 500 `upgrade_failed` naming the step that failed; 501 `not_supported` on PostgreSQL.",
		Request: openapi.Schema{"type": "object", "required": []string{"targetVersion"}, "additionalProperties": false,
			"properties": openapi.Schema{"targetVersion": openapi.Schema{
				"description": "This binary's schema version, or its release.",
				"oneOf":       []any{openapi.Schema{"type": "integer"}, openapi.Schema{"type": "string"}}}}},
		Status: http.StatusCreated, Response: upgrade.Upgrade{}, Example: upgraded})
	describe(http.MethodGet, base+"/status", openapi.Op{Summary: "Where the upgrade stands",
		Description: "The database's schema version and this binary's, the versions pending, the mode (`--upgrade`), whether " +
			"the server serves the upgrade endpoints alone (`readOnly`), and the last upgrade.",
		Response: upgrade.Status{}, Example: map[string]any{"state": "pending", "mode": "manual", "backend": "sqlite",
			"schemaVersion": 50, "binarySchemaVersion": 51, "binaryVersion": "1.4.0", "pendingVersions": []int{51}, "readOnly": true}})
	describe(http.MethodGet, base+"/history", openapi.Op{Summary: "List the upgrades, newest first",
		Description: "Told from the history file beside the database, which a rollback leaves in place; empty on PostgreSQL.",
		Query:       paging, Response: []upgrade.Upgrade{}})
	describe(http.MethodGet, base+"/audit", openapi.Op{Summary: "List the audit of upgrades and rollbacks, newest first",
		Description: "Every upgrade and rollback started, ended or refused: who (the admin credential and address), what, when, " +
			"and the outcome.",
		Query: paging, Response: []upgrade.AuditEntry{}, Example: []any{map[string]any{"timestamp": int64(1767225601200),
			"actor": actor, "action": "upgrade", "outcome": "succeeded", "upgradeId": "0b5c…", "fromVersion": 50, "toVersion": 51,
			"binaryVersion": "1.4.0", "snapshot": upgraded["snapshot"], "snapshotBytes": 4194304}}})
	describe(http.MethodGet, base+"/{upgradeId}", openapi.Op{Summary: "Get an upgrade", Response: upgrade.Upgrade{}, Example: upgraded})
	describe(http.MethodGet, base+"/rollback/capability", openapi.Op{Summary: "Whether a rollback can run, and what it would lose",
		Description: "The last upgrade's snapshot, if it is on disk and was not rolled back, and the writes since it: per table, " +
			"the rows now against the snapshot's, and the rows created or updated since (`loss.measured` says how). " +
			"`available` is false with a `reason` otherwise, and always on PostgreSQL.",
		Response: upgrade.Capability{}})
	describe(http.MethodPost, base+"/rollback", openapi.Op{Summary: "Roll the last upgrade back, and stop the server",
		Description: "Copies the snapshot beside the database and checks it, closes the database, renames the copy over it " +
			"(its -wal and -shm removed, the directory fsynced) and stops the server, for the older binary to start on " +
			"the file. The body may name the upgrade, which must be the last. 409 when there is no snapshot to roll back " +
			"to; 500 `upgrade_failed`; 501 `not_supported` on PostgreSQL.",
		Request: upgrade.RollbackInput{}, RequestOptional: true, Response: upgrade.RollbackResult{}})
	describe(http.MethodGet, base+"/pre-validation", openapi.Op{Summary: "Check the database before an upgrade",
		Description: "SQLite's integrity_check, the free space beside the database against its snapshot's size, and each " +
			"pending migration with what it changes. A check that fails or cannot run is in the answer, never a 500; " +
			"`ready` when something is pending and every check passed.",
		Response: upgrade.PreValidation{}, Example: map[string]any{"ready": true, "backend": "sqlite", "schemaVersion": 50,
			"binarySchemaVersion": 51, "pending": []any{map[string]any{"version": 51, "about": "Authorization policies (app/policies)…",
				"changes": []string{"create table authz_policies", "create index authz_policies_name on authz_policies",
					"create table authz_policy_settings"}}},
			"checks": []any{map[string]any{"name": "integrity", "status": "ok", "detail": "SQLite's integrity_check found the database file whole"},
				map[string]any{"name": "disk-space", "status": "ok", "detail": "…"}},
			"disk": map[string]any{"directory": "/var/lib/idenplane", "freeBytes": int64(52428800000), "neededBytes": 21390950}}})
	describe(http.MethodGet, base+"/health", openapi.Op{Summary: "Check the database after an upgrade",
		Description: "integrity_check, the schema version this binary's, foreign_key_check and a read of every realm; " +
			"503 with the same body when one fails.",
		Response: upgrade.Health{}, Also: map[int]any{http.StatusServiceUnavailable: upgrade.Health{}}})
	describe(http.MethodGet, base+"/config-compatibility", openapi.Op{Summary: "Settings whose meaning changed",
		Description: "The flags and environment variables whose meaning changed between the database's schema version (after " +
			"an upgrade, the one it came from; or `from`) and this binary's.",
		Query: []openapi.Param{{Name: "from", Description: "The schema version to list the changes from.",
			Schema: openapi.Schema{"type": "integer", "minimum": 0}}},
		Response: upgrade.Compatibility{}})
}
