package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the write would break a uniqueness rule.
	ErrConflict = errors.New("already exists")
)

// ConflictError is an ErrConflict that names the column that clashed.
type ConflictError struct {
	Column string // e.g. "email"; for a multi-column rule, its last column
	cause  error
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v (column %s): %v", ErrConflict, e.Column, e.cause)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// conflictColumn reads the clashing column from SQLite's message:
// "UNIQUE constraint failed: users.realm_id, users.email".
func conflictColumn(msg string) string {
	const marker = "constraint failed: "
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return ""
	}
	cols, _, _ := strings.Cut(msg[i+len(marker):], " (")
	parts := strings.Split(cols, ",")
	last := strings.TrimSpace(parts[len(parts)-1])
	_, col, _ := strings.Cut(last, ".")
	return col
}

// mapErr turns driver errors into the store's sentinels. Every query's error
// passes through here, so callers only ever test for ErrNotFound and ErrConflict.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return &ConflictError{Column: conflictColumn(se.Error()), cause: err}
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: referenced row: %v", ErrNotFound, err)
		}
	}
	return err
}
