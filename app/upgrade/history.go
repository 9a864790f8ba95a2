package upgrade

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// history is the file of JSON lines beside the database: an AuditEntry a
// line, appended and fsynced before the action it records is answered. It
// is never rewritten. A line cut short by a crash is skipped on reading,
// and the next entry starts on a line of its own.
type history struct {
	path string
	mu   sync.Mutex
}

// maxEntryBytes bounds a line read back; an entry is a few hundred bytes.
const maxEntryBytes = 1 << 20

// append writes e as one line and returns with it on disk; the first
// line's file is made with its directory entry fsynced too.
func (h *history) append(e AuditEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := os.OpenFile(h.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("upgrade history: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("upgrade history: %w", err)
	}
	if info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err != nil {
			f.Close()
			return fmt.Errorf("upgrade history: %w", err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...) // after a line a crash cut short
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("upgrade history: %w", err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("upgrade history: %w", err)
	}
	if info.Size() == 0 {
		if err := syncDir(filepath.Dir(h.path)); err != nil {
			return fmt.Errorf("upgrade history: %w", err)
		}
	}
	return nil
}

// read returns every entry, oldest first, and how many lines it skipped
// as unreadable; no file is no entries.
func (h *history) read() (entries []AuditEntry, skipped int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := os.Open(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("upgrade history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), maxEntryBytes)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			skipped++
			continue
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("upgrade history: %w", err)
	}
	return entries, skipped, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// fold tells each upgrade from its entries, newest first. An upgrade
// still running in the file that is not the one under way (running) was
// cut short.
func fold(entries []AuditEntry, running string) []Upgrade {
	var order []string
	byID := map[string]*Upgrade{}
	for _, e := range entries {
		if e.UpgradeID == "" || e.Outcome == OutcomeRefused {
			continue
		}
		u := byID[e.UpgradeID]
		if e.Action == ActionUpgrade && e.Outcome == OutcomeStarted {
			u = &Upgrade{ID: e.UpgradeID, Status: UpgradeRunning, FromVersion: e.FromVersion, ToVersion: e.ToVersion,
				BinaryVersion: e.BinaryVersion, StartedTimestamp: e.Timestamp, StartedBy: e.Actor, Snapshot: e.Snapshot}
			if byID[e.UpgradeID] == nil {
				order = append(order, e.UpgradeID)
			}
			byID[e.UpgradeID] = u
			continue
		}
		if u == nil {
			continue
		}
		switch {
		case e.Action == ActionUpgrade && e.Outcome == OutcomeSucceeded:
			u.Status, u.FinishedTimestamp, u.SnapshotBytes = UpgradeSucceeded, e.Timestamp, e.SnapshotBytes
		case e.Action == ActionUpgrade && e.Outcome == OutcomeFailed:
			u.Status, u.FinishedTimestamp, u.Error = UpgradeFailed, e.Timestamp, e.Detail
			if e.SnapshotBytes > 0 {
				u.SnapshotBytes = e.SnapshotBytes
			} else if e.Snapshot == "" {
				u.Snapshot = "" // failed before the snapshot was whole
			}
		case e.Action == ActionRollback && e.Outcome == OutcomeSucceeded:
			actor := e.Actor
			u.Status, u.RolledBackTimestamp, u.RolledBackBy = UpgradeRolledBack, e.Timestamp, &actor
		}
	}
	out := make([]Upgrade, 0, len(order))
	for _, id := range slices.Backward(order) {
		u := *byID[id]
		if u.Status == UpgradeRunning && u.ID != running {
			u.Status = UpgradeInterrupted
		}
		out = append(out, u)
	}
	return out
}
