package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrSQLiteOnly: the check or operation reads or replaces SQLite's file,
// which a PostgreSQL database does not have (PostgreSQL checks its own
// pages, and is backed up with pg_dump).
var ErrSQLiteOnly = errors.New("this applies to a SQLite database only")

// maxCheckProblems bounds the problems a check lists: a badly damaged
// file would otherwise list one per page.
const maxCheckProblems = 100

// IntegrityCheck runs SQLite's integrity_check over the whole database
// and answers the problems it finds: none when the file is whole. A file
// too damaged for the check to run is a problem too, not an error: the
// error is kept for a check that could not be asked (the context ended).
func (s *Store) IntegrityCheck(ctx context.Context) ([]string, error) {
	if s.Postgres() {
		return nil, ErrSQLiteOnly
	}
	return integrityCheck(ctx, s.r)
}

func integrityCheck(ctx context.Context, q querier) ([]string, error) {
	var problems []string
	err := eachRow(ctx, q, fmt.Sprintf("PRAGMA integrity_check(%d)", maxCheckProblems), func(scan func(...any) error) error {
		var line string
		if err := scan(&line); err != nil {
			return err
		}
		// A row may hold several problems, a line each, under a heading
		// naming the database.
		for p := range strings.Lines(line) {
			p = strings.TrimSpace(p)
			if p != "ok" && p != "" && !strings.HasPrefix(p, "*** ") && len(problems) < maxCheckProblems {
				problems = append(problems, p)
			}
		}
		return nil
	})
	if corrupt(err) {
		return append(problems, err.Error()), nil
	}
	if err != nil {
		return nil, fmt.Errorf("integrity check: %w", err)
	}
	return problems, nil
}

// ForeignKeyCheck lists the rows whose foreign keys name a row that does
// not exist: none in a database SQLite kept the keys of (foreign_keys is
// on for every connection), but a migration that rebuilds a table can
// leave some.
func (s *Store) ForeignKeyCheck(ctx context.Context) ([]string, error) {
	if s.Postgres() {
		return nil, ErrSQLiteOnly
	}
	var problems []string
	err := eachRow(ctx, s.r, "PRAGMA foreign_key_check", func(scan func(...any) error) error {
		var table, parent string
		var rowid, fk any
		if err := scan(&table, &rowid, &parent, &fk); err != nil {
			return err
		}
		if len(problems) < maxCheckProblems {
			problems = append(problems, fmt.Sprintf("table %s row %v refers to a missing row of %s", table, rowid, parent))
		}
		return nil
	})
	if corrupt(err) {
		return append(problems, err.Error()), nil
	}
	if err != nil {
		return nil, fmt.Errorf("foreign key check: %w", err)
	}
	return problems, nil
}

// corrupt says whether err is SQLite finding its file damaged, or not a
// database at all.
func corrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}
