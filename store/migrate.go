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

func (s *Store) migrate(ctx context.Context, migrations []migration) error {
	current, err := s.currentVersion(ctx)
	if err != nil {
		return err
	}
	latest, first := migrations[len(migrations)-1].version, migrations[0].version
	if current > latest {
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade idenplane", current, latest)
	}
	if current > 0 && current < first-1 {
		return fmt.Errorf("database schema version %d is older than this backend's baseline %d", current, first)
	}
	for _, m := range migrations {
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
			return err
		}
	}
	return nil
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
