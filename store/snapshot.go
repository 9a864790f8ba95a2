package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A snapshot is the database as it was before an upgrade: a Backup without
// the master key (the key stays the database's), beside the database,
// which a rollback puts back in its place.

// Snapshot writes a consistent copy of the database to path, which must
// not exist, fsynced with its directory before it returns.
func (s *Store) Snapshot(ctx context.Context, path string) error {
	if s.Postgres() {
		return ErrSQLiteOnly
	}
	return s.Backup(ctx, path, nil)
}

// SnapshotBytes is about what a snapshot of the database takes on disk:
// its pages in use. VACUUM INTO leaves the free ones out.
func (s *Store) SnapshotBytes(ctx context.Context) (int64, error) {
	if s.Postgres() {
		return 0, ErrSQLiteOnly
	}
	var pages, free, size int64
	for _, p := range []struct {
		pragma string
		into   *int64
	}{{"page_count", &pages}, {"freelist_count", &free}, {"page_size", &size}} {
		if err := s.r.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(p.into); err != nil {
			return 0, fmt.Errorf("measure the database: %w", err)
		}
	}
	return (pages - free) * size, nil
}

// RowCounts counts the rows of every table of the database, SQLite's own
// aside.
func (s *Store) RowCounts(ctx context.Context) (map[string]int64, error) {
	if s.Postgres() {
		return nil, ErrSQLiteOnly
	}
	return rowCounts(ctx, s.r)
}

// RowsWrittenSince counts, in each table with a created_at or updated_at
// column (milliseconds, as every table of the schema keeps them), the rows
// created or updated at or after since. A table without either column is
// not counted: RowCounts' difference is all that tells of its writes.
func (s *Store) RowsWrittenSince(ctx context.Context, since time.Time) (map[string]int64, error) {
	if s.Postgres() {
		return nil, ErrSQLiteOnly
	}
	stamped := map[string][]string{}
	err := eachRow(ctx, s.r, `SELECT m.name, c.name FROM sqlite_master m JOIN pragma_table_info(m.name) c
		WHERE m.type = 'table' AND c.name IN ('created_at', 'updated_at') ORDER BY m.name, c.name`, func(scan func(...any) error) error {
		var table, column string
		if err := scan(&table, &column); err != nil {
			return err
		}
		stamped[table] = append(stamped[table], column)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list stamped tables: %w", err)
	}
	out := map[string]int64{}
	for table, columns := range stamped {
		conds := make([]string, len(columns))
		for i, c := range columns {
			conds[i] = c + " >= $1"
		}
		var n int64
		if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(table)+" WHERE "+strings.Join(conds, " OR "),
			since.UnixMilli()).Scan(&n); err != nil {
			return nil, fmt.Errorf("count the rows of %s written since %s: %w", table, since.Format(time.RFC3339), err)
		}
		out[table] = n
	}
	return out, nil
}

// SnapshotFacts is what a snapshot file holds, read without changing it.
type SnapshotFacts struct {
	SchemaVersion int
	Rows          map[string]int64 // per table
	// Problems are its integrity check's: none when the file is whole.
	Problems []string
}

// ReadSnapshot reads a snapshot file (or any SQLite database file not in
// use): its schema version, its tables' row counts and, with check, the
// problems of its integrity check.
func ReadSnapshot(ctx context.Context, path string, check bool) (*SnapshotFacts, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	db, err := sql.Open(sqliteDialect.driver, sqliteSourceDSN(path))
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	f := &SnapshotFacts{}
	if check {
		if f.Problems, err = integrityCheck(ctx, db); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", path, err)
		}
		if len(f.Problems) > 0 {
			return f, nil // counting rows of a damaged file tells nothing
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&f.SchemaVersion); err != nil {
		return nil, fmt.Errorf("snapshot %s: read its schema version: %w", path, err)
	}
	if f.Rows, err = rowCounts(ctx, db); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return f, nil
}

func rowCounts(ctx context.Context, q querier) (map[string]int64, error) {
	var tables []string
	err := eachRow(ctx, q, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`,
		func(scan func(...any) error) error {
			var name string
			if err := scan(&name); err != nil {
				return err
			}
			tables = append(tables, name)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	out := make(map[string]int64, len(tables))
	for _, t := range tables {
		var n int64
		if err := q.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(t)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count the rows of %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// closeWait bounds how long RestoreSnapshot waits for the requests under
// way to give their connections back once the store is closed.
const closeWait = 30 * time.Second

// RestoreSnapshot puts a snapshot back in place of the database and
// leaves the store closed: the server on it must stop, and a binary of the
// snapshot's schema start on the file. The snapshot is copied beside the
// database (fsynced) and checked before anything of the database is
// touched; a failure until then leaves the store open and the database as
// it was. Then the store closes, every connection is waited for, the
// database is taken exclusively (ErrInUse while another process has it
// open), its -wal and -shm files are removed (SQLite would replay that log
// over the snapshot) and the copy is renamed over it, the directory
// fsynced. The snapshot file itself stays, for another rollback.
func (s *Store) RestoreSnapshot(ctx context.Context, snapshot string) error {
	if s.Postgres() {
		return ErrSQLiteOnly
	}
	temp, err := createPrivateTemp(s.path, "rollback")
	if err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	defer func() {
		if temp != "" {
			os.Remove(temp)
		}
	}()
	if err := copyFile(snapshot, temp); err != nil {
		return fmt.Errorf("rollback: copy %s: %w", snapshot, err)
	}
	facts, err := ReadSnapshot(ctx, temp, true)
	if err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	if len(facts.Problems) > 0 {
		return fmt.Errorf("rollback: the snapshot %s is damaged: %s", snapshot, strings.Join(facts.Problems, "; "))
	}
	// The writes since the last checkpoint are thrown away with the rest;
	// emptying the log first only leaves the database file whole should
	// the rename below never come.
	_ = s.Checkpoint(ctx)
	closed := func(err error) error { return fmt.Errorf("rollback: %w: %w", ErrStoreClosed, err) }
	if err := s.Close(); err != nil {
		return closed(err)
	}
	if err := s.waitClosed(ctx); err != nil {
		return closed(err)
	}
	release, err := LockExclusive(s.path)
	if err != nil {
		return closed(err)
	}
	defer release()
	if err := removeSidecars(s.path); err != nil {
		return closed(err)
	}
	if err := os.Rename(temp, s.path); err != nil {
		return closed(err)
	}
	temp = ""
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return closed(err)
	}
	return nil
}

// ErrStoreClosed: RestoreSnapshot failed after it closed the store, which
// serves no more; the database file is the one it had unless the rename
// came, and the error says which step failed.
var ErrStoreClosed = errors.New("the store was closed for the rollback")

// waitClosed waits until a closed store's last connection is closed: a
// request that held one when Close came gives it back when it ends, and
// until then could still write to the file.
func (s *Store) waitClosed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, closeWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		open := s.writerDB.Stats().OpenConnections + s.readerDB.Stats().OpenConnections
		if s.lockDB != nil {
			open += s.lockDB.Stats().OpenConnections
		}
		if open == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("requests under way kept the database's connections open")
		case <-tick.C:
		}
	}
}
