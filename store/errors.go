package store

import (
	"database/sql"
	"errors"
	"fmt"
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

// mapErr turns driver errors into the store's sentinels. Every query's error
// passes through here, so callers only ever test for ErrNotFound and ErrConflict.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	// Each driver's errors are its own types: at most one dialect knows err.
	broken, column := sqliteDialect.constraint(err)
	if broken == noConstraint {
		broken, column = postgresDialect.constraint(err)
	}
	switch broken {
	case uniqueConstraint:
		return &ConflictError{Column: column, cause: err}
	case referenceMissing:
		return fmt.Errorf("%w: referenced row: %v", ErrNotFound, err)
	}
	return err
}
