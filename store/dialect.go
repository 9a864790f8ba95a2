package store

import (
	"context"
	"database/sql"
)

// A dialect is what the store needs of its database beyond the portable
// SQL written everywhere else: how to reach it, how to read its errors,
// and the few statements without a portable form. SQLite's is the only
// one (dialect_sqlite.go); docs/storage.md says what another must provide.
type dialect struct {
	// driver is the database/sql driver's name.
	driver string
	// dsn is the data source of the writer pool, or of the read-only
	// pool, with the settings each connection needs.
	dsn func(path string, readOnly bool) string
	// tableExists counts the tables named $1: 0 or 1.
	tableExists string
	// columnExists counts the columns named $2 of table $1: 0 or 1.
	columnExists string
	// constraint says which rule, if any, a driver error broke, and for
	// a uniqueness rule the column that clashed (its last, for a rule of
	// several columns).
	constraint func(err error) (broken constraint, column string)
	// checkpoint makes the database's files hold every committed write on
	// their own, as a copy or a restore needs them.
	checkpoint func(ctx context.Context, writer *sql.DB) error
	// wipeDeleted turns on (or off) the overwriting of what the writer
	// deletes or replaces, so that a value taken out of clear cannot be
	// read back from the file's free space.
	wipeDeleted func(ctx context.Context, writer *sql.DB, on bool) error
	// backupInto writes a consistent copy of the whole database, beside a
	// running writer, into the empty file named $1; "" when the backend
	// is backed up with its own tools.
	backupInto string
	// readTx are the options of ReadTx's transactions: one snapshot.
	readTx *sql.TxOptions
	// writeLock begins every write transaction on a database that
	// several servers share, holding their writes to one at a time
	// (fleet.go); "" where the driver's BEGIN does.
	writeLock string
	// textIndexes says the schema keeps trigram tables of the texts SCIM
	// searches by substring, and that a prefix's range may be bounded by
	// a text that is not UTF-8 (scim_users.go): SQLite's.
	textIndexes bool
	// likeIsExact says LIKE compares text as written, case included
	// (PostgreSQL's), so that every substring comparison may be a LIKE,
	// which the backend's own trigram indexes answer.
	likeIsExact bool
	// notify sends the notification $2 on channel $1; tryLock takes the
	// advisory lock named $1 if it is free and says whether it did, and
	// unlock releases it. "" where one server owns the database.
	notify, tryLock, unlock string

	// What copy (copy.go) needs besides.

	// tables describes every table of the database: columns, primary and
	// foreign keys, rowid and identity columns.
	tables func(ctx context.Context, q querier) (map[string]*schemaTable, error)
	// sourceDSN is the data source copy reads a database through: read
	// only, and changing nothing of it, its journal mode included.
	sourceDSN func(path string) string
	// bytewise is the collation that orders text by its bytes.
	bytewise string
	// copyRowsPerInsert is how many rows one INSERT of copy writes, at
	// most: SQLite looks each parameter up by name among the statement's
	// (quadratic in their number), so one row a statement, prepared
	// once, is fastest there; PostgreSQL takes many rows per round trip.
	copyRowsPerInsert int
	// overriding, between an INSERT's columns and its VALUES, lets it
	// give identity columns their values; "" where there are none.
	overriding string
	// restartIdentity makes an identity column's sequence go on past the
	// values copied into it.
	restartIdentity func(ctx context.Context, q querier, table, column string) error
}

// constraint is a rule of the schema a write broke.
type constraint int

const (
	noConstraint     constraint = iota
	uniqueConstraint            // a UNIQUE or PRIMARY KEY: ErrConflict
	referenceMissing            // a FOREIGN KEY to a row that does not exist: ErrNotFound
)
