// Package upgrade is the upgrade and rollback of the database under a new
// binary (docs/upgrade.md). With --upgrade=manual a server started on a
// database older than its schema opens it without migrating, serves only
// these endpoints and the health checks (Gate), and waits: pre-validation
// checks the file and lists what the pending migrations change; an
// upgrade takes a snapshot beside the database (SQLite's VACUUM INTO,
// fsynced) and applies them; a rollback puts the snapshot back and stops
// the server, so that the older binary starts on it. With --upgrade=auto
// (the default) the store migrates at start, as it always did, and these
// endpoints report and roll back.
//
// The history of upgrades and the audit of who did what are one file of
// JSON lines beside the database (HistoryPath), appended and fsynced: a
// table would go back in time with the snapshot a rollback restores.
package upgrade

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idenplane/idenplane/store"
)

// Mode is --upgrade's value: when the migrations of a new binary run.
type Mode string

const (
	// ModeAuto migrates the database when the server opens it.
	ModeAuto Mode = "auto"
	// ModeManual leaves a database that is behind as it is, and serves
	// the upgrade endpoints alone until POST /admin/upgrade.
	ModeManual Mode = "manual"
)

// Modes are the values --upgrade takes.
var Modes = []Mode{ModeAuto, ModeManual}

// ParseMode reads --upgrade.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("must be %s or %s, not %q", ModeAuto, ModeManual, s)
}

// Actor is who made a request: an admin credential, as the audit shows it.
type Actor struct {
	Type string `json:"type"` // api-key, user, service-account
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	IP   string `json:"ip,omitempty"`
}

// Deps is what the module uses.
type Deps struct {
	Store *store.Store
	Log   *slog.Logger
	Now   func() time.Time
	// BaseURL is the server's public address, for the Location of an
	// upgrade.
	BaseURL string
	// Mode is --upgrade's. With ModeManual the store must have been
	// opened with DeferMigrations.
	Mode Mode
	// BinaryVersion is this binary's release ("1.4.0"; "dev" when not
	// stamped): a target an upgrade may name besides the schema version.
	BinaryVersion string
	// Caller is who makes a request, for the audit.
	Caller func(r *http.Request) Actor
	// Upgraded builds the rest of the server once the migrations of a
	// database that waited are applied; nil: there is nothing to build.
	Upgraded func(ctx context.Context) error
	// Shutdown stops the server. A rollback calls it once the store is
	// closed; nil, and rollbacks are refused: the server would go on
	// without a database.
	Shutdown func()
}

// Service is the module's handlers, the gate of a server whose upgrade
// waits, and the one upgrade or rollback at a time.
type Service struct {
	deps    Deps
	history *history // nil on PostgreSQL: no file beside the database
	// work is held by the upgrade or rollback under way; running, under
	// mu, names the upgrade, which the history then reads as running
	// rather than cut short.
	work    sync.Mutex
	mu      sync.Mutex
	running string
	// pending: the database waits for an upgrade (ModeManual), and the
	// server serves the upgrade endpoints alone. stopping: a rollback is
	// closing the store, and the server goes down after it. restart: the
	// migrations are applied but the server could not build on them.
	pending, stopping, restart atomic.Bool
}

// New builds the module.
func New(d Deps) *Service {
	s := &Service{deps: d}
	if !d.Store.Postgres() {
		s.history = &history{path: HistoryPath(d.Store.Path())}
	}
	return s
}

// HistoryPath is the history and audit file of the database at dbPath.
func HistoryPath(dbPath string) string { return dbPath + ".upgrades.jsonl" }

// snapshotPath names the snapshot an upgrade from version from takes at
// now: beside the database, so that a rename never crosses file systems,
// and named for what it holds.
func snapshotPath(dbPath string, from int, now time.Time) string {
	return fmt.Sprintf("%s.pre-upgrade-%d-%s.db", dbPath, from, now.UTC().Format("20060102T150405.000Z"))
}

// Pending says whether the database waits for an upgrade: ModeManual, and
// its schema is behind this binary's. The server then serves the upgrade
// endpoints alone (Gate) until one succeeds. Behind under ModeAuto is an
// error: the store was opened with DeferMigrations, and the server's code
// would run on a schema it does not know.
func (s *Service) Pending(ctx context.Context) (bool, error) {
	v, err := s.deps.Store.SchemaVersion(ctx)
	if err != nil {
		return false, fmt.Errorf("upgrade: read the schema version: %w", err)
	}
	latest := s.deps.Store.LatestSchemaVersion()
	behind := v < latest
	if behind && s.deps.Mode != ModeManual {
		return false, fmt.Errorf("upgrade: the database is at schema version %d, behind this binary's %d, and --upgrade is %s: "+
			"the store must migrate it at open", v, latest, s.deps.Mode)
	}
	s.pending.Store(behind)
	return behind, nil
}

// Stopping says whether a rollback replaced the database: the store is
// closed, and the server must not touch it again (a checkpoint at exit).
func (s *Service) Stopping() bool { return s.stopping.Load() }

func (s *Service) backend() string {
	if s.deps.Store.Postgres() {
		return "postgres"
	}
	return "sqlite"
}

func (s *Service) caller(r *http.Request) Actor {
	if s.deps.Caller == nil {
		return Actor{}
	}
	return s.deps.Caller(r)
}

func (s *Service) setRunning(id string) {
	s.mu.Lock()
	s.running = id
	s.mu.Unlock()
}

func (s *Service) runningID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// dir is the database's directory, where snapshots go.
func (s *Service) dir() string { return filepath.Dir(s.deps.Store.Path()) }
