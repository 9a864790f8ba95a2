package upgrade

import "encoding/json"

// The shapes of the endpoints' bodies (docs/upgrade.md). Times are
// milliseconds since the epoch, as everywhere in the admin API.

// State is where the server stands.
type State string

const (
	StateCurrent     State = "up-to-date"   // the database is at this binary's schema
	StatePending     State = "pending"      // it is behind and waits (--upgrade=manual): only the upgrade endpoints serve
	StateUpgrading   State = "upgrading"    // an upgrade is under way
	StateRollingBack State = "rolling-back" // a rollback is under way
	// StateRestart: the migrations are applied, but the server could not
	// start on them; it must be restarted.
	StateRestart State = "restart-required"
)

// Status is GET /admin/upgrade/status.
type Status struct {
	State   State  `json:"state"`
	Mode    Mode   `json:"mode"`
	Backend string `json:"backend"` // sqlite or postgres
	// SchemaVersion is the database's; BinarySchemaVersion the one this
	// binary carries, and BinaryVersion its release.
	SchemaVersion       int    `json:"schemaVersion"`
	BinarySchemaVersion int    `json:"binarySchemaVersion"`
	BinaryVersion       string `json:"binaryVersion"`
	PendingVersions     []int  `json:"pendingVersions"`
	// ReadOnly: the server serves the health checks and the upgrade
	// endpoints alone; everything else answers 503 upgrade_pending.
	ReadOnly    bool     `json:"readOnly"`
	LastUpgrade *Upgrade `json:"lastUpgrade,omitempty"`
}

// UpgradeStatus is how an upgrade went.
type UpgradeStatus string

const (
	UpgradeRunning   UpgradeStatus = "running"
	UpgradeSucceeded UpgradeStatus = "succeeded"
	UpgradeFailed    UpgradeStatus = "failed"
	// UpgradeInterrupted: started, and the server stopped before it
	// ended (killed, or the machine went down). Each migration is one
	// transaction: the database is at one of the versions between.
	UpgradeInterrupted UpgradeStatus = "interrupted"
	UpgradeRolledBack  UpgradeStatus = "rolled-back"
)

// Upgrade is one upgrade, as its entries in the history file tell it.
type Upgrade struct {
	ID                string        `json:"id"`
	Status            UpgradeStatus `json:"status"`
	FromVersion       int           `json:"fromVersion"`
	ToVersion         int           `json:"toVersion"`
	BinaryVersion     string        `json:"binaryVersion"`
	StartedTimestamp  int64         `json:"startedTimestamp"`
	FinishedTimestamp int64         `json:"finishedTimestamp,omitempty"`
	StartedBy         Actor         `json:"startedBy"`
	// Snapshot is the file the database was copied to before the
	// migrations, and SnapshotBytes its size once written.
	Snapshot      string `json:"snapshot,omitempty"`
	SnapshotBytes int64  `json:"snapshotBytes,omitempty"`
	Error         string `json:"error,omitempty"`
	// RolledBackTimestamp and RolledBackBy: the rollback that put the
	// snapshot back.
	RolledBackTimestamp int64  `json:"rolledBackTimestamp,omitempty"`
	RolledBackBy        *Actor `json:"rolledBackBy,omitempty"`
}

// Action is what an audit entry records.
type Action string

const (
	ActionUpgrade  Action = "upgrade"
	ActionRollback Action = "rollback"
)

// Outcome is how an action ended, or that it began.
type Outcome string

const (
	OutcomeStarted   Outcome = "started"
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	OutcomeRefused   Outcome = "refused" // turned down before anything was touched
)

// AuditEntry is one line of the history file, and one entry of GET
// /admin/upgrade/audit: who did what, when, and how it ended.
type AuditEntry struct {
	Timestamp     int64   `json:"timestamp"`
	Actor         Actor   `json:"actor"`
	Action        Action  `json:"action"`
	Outcome       Outcome `json:"outcome"`
	UpgradeID     string  `json:"upgradeId,omitempty"`
	FromVersion   int     `json:"fromVersion,omitempty"`
	ToVersion     int     `json:"toVersion,omitempty"`
	BinaryVersion string  `json:"binaryVersion,omitempty"`
	Snapshot      string  `json:"snapshot,omitempty"`
	SnapshotBytes int64   `json:"snapshotBytes,omitempty"`
	// Detail is why it failed or was refused, or what a rollback
	// discarded.
	Detail string `json:"detail,omitempty"`
}

// StartInput is POST /admin/upgrade's body. TargetVersion is this binary's
// schema version (a number, or a string of digits) or its release ("1.4.0").
type StartInput struct {
	TargetVersion json.RawMessage `json:"targetVersion"`
}

// RollbackInput is POST /admin/upgrade/rollback's body, which may be left
// out. UpgradeID, when given, must name the last upgrade: a guard against
// rolling back one that came after the caller looked.
type RollbackInput struct {
	UpgradeID string `json:"upgradeId"`
}

// RollbackResult is POST /admin/upgrade/rollback's answer.
type RollbackResult struct {
	Upgrade Upgrade `json:"upgrade"`
	// SchemaVersion is the snapshot's: the database's now.
	SchemaVersion int   `json:"schemaVersion"`
	Loss          *Loss `json:"loss,omitempty"`
	// ServerStopping: the server is going down, for the binary of
	// SchemaVersion to start on the database.
	ServerStopping bool `json:"serverStopping"`
}

// CheckStatus is a check's verdict.
type CheckStatus string

const (
	CheckOK      CheckStatus = "ok"
	CheckFailed  CheckStatus = "failed"
	CheckSkipped CheckStatus = "skipped" // does not apply here (PostgreSQL; free space on another system)
	CheckError   CheckStatus = "error"   // could not run; Detail says why
)

// Check is one check of pre-validation or health.
type Check struct {
	Name     string      `json:"name"`
	Status   CheckStatus `json:"status"`
	Detail   string      `json:"detail"`
	Problems []string    `json:"problems,omitempty"`
}

// PendingVersion is a migration the database lacks and what it changes.
type PendingVersion struct {
	Version int      `json:"version"`
	About   string   `json:"about"`
	Changes []string `json:"changes"`
}

// DiskSpace is what the snapshot needs beside the database, and what there
// is.
type DiskSpace struct {
	Directory   string `json:"directory"`
	FreeBytes   int64  `json:"freeBytes"`
	NeededBytes int64  `json:"neededBytes"`
}

// PreValidation is GET /admin/upgrade/pre-validation. Ready: something is
// pending and no check failed or could not run.
type PreValidation struct {
	Ready               bool             `json:"ready"`
	Backend             string           `json:"backend"`
	SchemaVersion       int              `json:"schemaVersion"`
	BinarySchemaVersion int              `json:"binarySchemaVersion"`
	Pending             []PendingVersion `json:"pending"`
	Checks              []Check          `json:"checks"`
	Disk                *DiskSpace       `json:"disk,omitempty"`
}

// Health is GET /admin/upgrade/health: answered 200 when Status is ok, 503
// when it is failed.
type Health struct {
	Status              string  `json:"status"`
	SchemaVersion       int     `json:"schemaVersion"`
	BinarySchemaVersion int     `json:"binarySchemaVersion"`
	Checks              []Check `json:"checks"`
}

// Health's statuses.
const (
	HealthOK     = "ok"
	HealthFailed = "failed"
)

// Capability is GET /admin/upgrade/rollback/capability.
type Capability struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"` // why not, when not
	// Upgrade is the one a rollback would undo, and Snapshot the file it
	// would put back.
	Upgrade  *Upgrade      `json:"upgrade,omitempty"`
	Snapshot *SnapshotInfo `json:"snapshot,omitempty"`
	Loss     *Loss         `json:"loss,omitempty"`
}

// SnapshotInfo is a snapshot file as it is on disk.
type SnapshotInfo struct {
	Path           string `json:"path"`
	Bytes          int64  `json:"bytes"`
	SchemaVersion  int    `json:"schemaVersion"`
	TakenTimestamp int64  `json:"takenTimestamp"`
}

// Loss is what a rollback throws away: the writes since the snapshot.
// Measured says how; each table in Tables differs from the snapshot.
type Loss struct {
	Measured       string `json:"measured"`
	SinceTimestamp int64  `json:"sinceTimestamp"`
	// RowsAdded sums, over the tables, the rows the database has beyond
	// the snapshot's count (every row, in a table the upgrade created);
	// RowsRemoved the rows it has fewer, which the rollback brings back.
	RowsAdded   int64 `json:"rowsAdded"`
	RowsRemoved int64 `json:"rowsRemoved"`
	// RowsWrittenSince counts the rows created or updated since the
	// snapshot, in the tables with created_at or updated_at.
	RowsWrittenSince int64       `json:"rowsWrittenSince"`
	Tables           []TableLoss `json:"tables"`
}

// TableLoss is one table's difference from the snapshot.
type TableLoss struct {
	Table        string `json:"table"`
	SnapshotRows int64  `json:"snapshotRows"`
	CurrentRows  int64  `json:"currentRows"`
	WrittenSince int64  `json:"writtenSince"`
	// NotInSnapshot: the upgrade created the table; the rollback drops it.
	NotInSnapshot bool `json:"notInSnapshot,omitempty"`
}

// ConfigChange is a setting whose meaning changed between two schema
// versions (compat.go).
type ConfigChange struct {
	// SchemaVersion is the schema the binary that changed it carried.
	SchemaVersion int      `json:"schemaVersion"`
	Settings      []string `json:"settings"` // the flags and environment variables
	Before        string   `json:"before"`
	Now           string   `json:"now"`
	Action        string   `json:"action"` // what an operator checks or does
}

// Compatibility is GET /admin/upgrade/config-compatibility: the changes
// of the schema versions FromVersion to ToVersion.
type Compatibility struct {
	FromVersion int            `json:"fromVersion"`
	ToVersion   int            `json:"toVersion"`
	Changes     []ConfigChange `json:"changes"`
}
