package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

type migration struct {
	version int
	sql     string
}

// parseMigrations splits a schema file at its "-- version N" lines.
// Versions must run 1, 2, 3… without gaps or repeats, except that the
// first may be a baseline, "-- version N (baseline)": the whole schema as
// of version N, for a backend that has no database older than N
// (schema_postgres.sql). Each section is a slice of schema: built line by
// line, the first section's hundreds of lines cost megabytes of copies
// and a tenth of the server's start.
func parseMigrations(schema string) ([]migration, error) {
	var out []migration
	body := 0 // where the current section's statements begin
	offset := 0
	for line := range strings.Lines(schema) {
		start := offset
		offset += len(line)
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "-- version ")
		if !ok {
			continue
		}
		rest, baseline := strings.CutSuffix(strings.TrimSpace(rest), " (baseline)")
		v, err := strconv.Atoi(rest)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("schema: bad version line %q", strings.TrimSpace(line))
		}
		switch {
		case baseline && len(out) > 0:
			return nil, fmt.Errorf("schema: version %d is a baseline after version %d", v, out[len(out)-1].version)
		case !baseline && len(out) == 0 && v != 1:
			return nil, fmt.Errorf("schema: version %d follows version 0", v)
		case len(out) > 0 && v != out[len(out)-1].version+1:
			return nil, fmt.Errorf("schema: version %d follows version %d", v, out[len(out)-1].version)
		}
		if len(out) > 0 {
			out[len(out)-1].sql = schema[body:start]
		}
		out = append(out, migration{version: v})
		body = offset
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("schema: no \"-- version N\" sections")
	}
	out[len(out)-1].sql = schema[body:]
	return out, nil
}

// migrate applies every migration above the database's version, one
// transaction each. With deferred set (Config.DeferMigrations) it applies
// none to a database that has a version already, and says it is behind:
// Migrate applies them later, once a snapshot is taken.
func (s *Store) migrate(ctx context.Context, deferred bool) (behind bool, err error) {
	current, err := s.currentVersion(ctx)
	if err != nil {
		return false, err
	}
	if err := s.checkVersion(current); err != nil {
		return false, err
	}
	if deferred && current > 0 && current < s.LatestSchemaVersion() {
		return true, nil
	}
	for _, m := range s.migrations {
		if m.version <= current {
			continue
		}
		err := s.Tx(ctx, func(tx *Store) error {
			// Another server on the database may have run it meanwhile:
			// the write lock orders the two, and the later finds it done.
			if v, err := tx.currentVersion(ctx); err != nil || v >= m.version {
				return err
			}
			if _, err := tx.w.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %d: %w", m.version, err)
			}
			if _, err := tx.w.ExecContext(ctx, "DELETE FROM schema_version"); err != nil {
				return err
			}
			_, err := tx.w.ExecContext(ctx, "INSERT INTO schema_version (version) VALUES ($1)", m.version)
			return err
		})
		if err != nil {
			return false, err
		}
	}
	return false, nil
}

// checkVersion refuses a database this binary cannot migrate: one newer
// than its schema, or older than its backend's baseline.
func (s *Store) checkVersion(current int) error {
	latest, first := s.LatestSchemaVersion(), s.migrations[0].version
	if current > latest {
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade idenplane", current, latest)
	}
	if current > 0 && current < first-1 {
		return fmt.Errorf("database schema version %d is older than this backend's baseline %d", current, first)
	}
	return nil
}

// LatestSchemaVersion is the version of the schema this binary carries:
// the one Open, or Migrate, brings a database to.
func (s *Store) LatestSchemaVersion() int { return s.migrations[len(s.migrations)-1].version }

// Migrate applies the migrations a store opened with DeferMigrations left
// pending, then the upkeep Open does after migrating. Each migration is
// one transaction: a failure leaves the database at the version before
// the migration that failed.
func (s *Store) Migrate(ctx context.Context) error {
	if _, err := s.migrate(ctx, false); err != nil {
		return err
	}
	return s.afterMigrate(ctx)
}

// afterMigrate is the upkeep of a database at this binary's schema: the
// folded names of rows written before their columns, the master key's
// check, the outbox's bodies sealed; the text indexer started.
func (s *Store) afterMigrate(ctx context.Context) error {
	if err := s.foldNames(ctx); err != nil {
		return err
	}
	if err := s.startTextIndexer(ctx); err != nil {
		return err
	}
	if err := s.checkMasterKey(ctx); err != nil {
		return err
	}
	return s.sealOutbox(ctx)
}

// PendingMigration is a migration the database has not had: its version,
// the comment that opens it in the schema file, and a line per statement
// saying what it changes ("create table authz_policies").
type PendingMigration struct {
	Version int
	About   string
	Changes []string
}

// PendingMigrations lists the migrations above the database's version, in
// order: none once it is at LatestSchemaVersion.
func (s *Store) PendingMigrations(ctx context.Context) ([]PendingMigration, error) {
	current, err := s.currentVersion(ctx)
	if err != nil {
		return nil, err
	}
	var out []PendingMigration
	for _, m := range s.migrations {
		if m.version > current {
			about, changes := summarizeMigration(m.sql)
			out = append(out, PendingMigration{Version: m.version, About: about, Changes: changes})
		}
	}
	return out, nil
}

// SchemaVersion is the version of the schema the database is at.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) { return s.currentVersion(ctx) }

func (s *Store) currentVersion(ctx context.Context) (int, error) {
	var n int
	err := s.w.QueryRowContext(ctx, s.dialect.tableExists, "schema_version").Scan(&n)
	if err != nil || n == 0 {
		return 0, err
	}
	var v int
	if err := s.w.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
