package upgrade

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A line a crash cut short is skipped, and the next entry starts a line
// of its own.
func TestHistoryAfterATornLine(t *testing.T) {
	h := &history{path: filepath.Join(t.TempDir(), "idenplane.db.upgrades.jsonl")}
	first := AuditEntry{Timestamp: 1, Action: ActionUpgrade, Outcome: OutcomeStarted, UpgradeID: "a"}
	if err := h.append(first); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"timestamp":2,"action":"upgr`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	second := AuditEntry{Timestamp: 3, Action: ActionUpgrade, Outcome: OutcomeFailed, UpgradeID: "a", Detail: "disk full"}
	if err := h.append(second); err != nil {
		t.Fatal(err)
	}
	entries, skipped, err := h.read()
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 1 || !reflect.DeepEqual(entries, []AuditEntry{first, second}) {
		t.Fatalf("read %+v, skipped %d", entries, skipped)
	}
	if info, err := os.Stat(h.path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, %v: want 0600", info.Mode(), err)
	}
}

func TestFold(t *testing.T) {
	started := func(id string, at int64) AuditEntry {
		return AuditEntry{Timestamp: at, Action: ActionUpgrade, Outcome: OutcomeStarted, UpgradeID: id, FromVersion: 50,
			ToVersion: 51, Snapshot: "/db.pre-upgrade-" + id}
	}
	ended := func(action Action, outcome Outcome, id string, at int64) AuditEntry {
		return AuditEntry{Timestamp: at, Action: action, Outcome: outcome, UpgradeID: id, SnapshotBytes: 4096}
	}
	for _, tc := range []struct {
		name     string
		entries  []AuditEntry
		running  string
		statuses []UpgradeStatus // newest first
		snapshot string          // the newest's
	}{
		{"none", nil, "", nil, ""},
		{"succeeded", []AuditEntry{started("a", 1), ended(ActionUpgrade, OutcomeSucceeded, "a", 2)}, "",
			[]UpgradeStatus{UpgradeSucceeded}, "/db.pre-upgrade-a"},
		{"running here", []AuditEntry{started("a", 1)}, "a", []UpgradeStatus{UpgradeRunning}, "/db.pre-upgrade-a"},
		{"cut short by a crash", []AuditEntry{started("a", 1)}, "", []UpgradeStatus{UpgradeInterrupted}, "/db.pre-upgrade-a"},
		{"failed before its snapshot", []AuditEntry{started("a", 1),
			{Timestamp: 2, Action: ActionUpgrade, Outcome: OutcomeFailed, UpgradeID: "a", Detail: "disk full"}}, "",
			[]UpgradeStatus{UpgradeFailed}, ""},
		{"failed in a migration", []AuditEntry{started("a", 1),
			{Timestamp: 2, Action: ActionUpgrade, Outcome: OutcomeFailed, UpgradeID: "a", Snapshot: "/db.pre-upgrade-a", SnapshotBytes: 9}}, "",
			[]UpgradeStatus{UpgradeFailed}, "/db.pre-upgrade-a"},
		{"rolled back, then upgraded again", []AuditEntry{started("a", 1), ended(ActionUpgrade, OutcomeSucceeded, "a", 2),
			ended(ActionRollback, OutcomeStarted, "a", 3), ended(ActionRollback, OutcomeSucceeded, "a", 4),
			started("b", 5), ended(ActionUpgrade, OutcomeSucceeded, "b", 6)}, "",
			[]UpgradeStatus{UpgradeSucceeded, UpgradeRolledBack}, "/db.pre-upgrade-b"},
		{"a failed rollback changes nothing", []AuditEntry{started("a", 1), ended(ActionUpgrade, OutcomeSucceeded, "a", 2),
			ended(ActionRollback, OutcomeFailed, "a", 3)}, "", []UpgradeStatus{UpgradeSucceeded}, "/db.pre-upgrade-a"},
		{"refusals are no upgrades", []AuditEntry{{Timestamp: 1, Action: ActionUpgrade, Outcome: OutcomeRefused},
			ended(ActionRollback, OutcomeRefused, "x", 2)}, "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ups := fold(tc.entries, tc.running)
			var got []UpgradeStatus
			for _, u := range ups {
				got = append(got, u.Status)
			}
			if !reflect.DeepEqual(got, tc.statuses) {
				t.Fatalf("statuses %v, want %v", got, tc.statuses)
			}
			if len(ups) > 0 && ups[0].Snapshot != tc.snapshot {
				t.Errorf("snapshot %q, want %q", ups[0].Snapshot, tc.snapshot)
			}
		})
	}
}
