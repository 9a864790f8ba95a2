// Package store keeps every realm in one SQLite database: one writer
// connection, so writes never contend for the lock, and a pool of read-only
// connections that WAL mode lets run beside it. What is SQLite's own sits
// in its dialect (dialect_sqlite.go); the rest is portable SQL.
package store

import (
	"context"
	"crypto/cipher"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// querier is what both a connection pool and a transaction offer, so every
// store method runs unchanged inside Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store is the database. Its zero value is not usable; call Open.
type Store struct {
	dialect  *dialect
	writerDB *sql.DB
	readerDB *sql.DB
	lockDB   *sql.DB // Exclusive's, on a database servers share; nil otherwise
	w        querier // writes, and reads that must see them (the tx inside Tx)
	r        querier // reads
	inTx     bool
	writer   *stmtCache
	reader   *stmtCache
	changes  *changes
	group    *Batcher[*groupMember] // GroupTx's queue, shared by the Stores inside transactions
	aead     cipher.AEAD
	now      func() time.Time
	unlock   func() error // releases the in-use lock; nil without Config.Lock
	trace    Tracer       // nil: nothing traced (SetTracer)
	texts    *textIndexer // moves changed texts into SCIM's trigram indexes; nil without them
	// migrations are the schema's, parsed; Migrate applies those Open
	// deferred.
	migrations []migration
	path       string     // Config.Path
	closeOnce  *sync.Once // Close's: a rollback closes the store before its owner does
	closeErr   *error
}

// Config says where the database is and how to open it.
type Config struct {
	// Path is the SQLite file, or a postgres:// URL (IsPostgres).
	Path string
	// Schema is the contents of schema.sql: numbered migrations; and
	// PostgresSchema those of schema_postgres.sql, for a PostgreSQL URL.
	Schema, PostgresSchema string
	// Readers is the size of the read-only pool; 0: four, or twice the
	// cores if more. ConnMaxLifetime closes a connection after that long
	// (0: never), so that a database behind a pooler or a failover is
	// reached anew. StatementTimeout (PostgreSQL only; 0: none) cancels a
	// statement that runs longer.
	Readers          int
	ConnMaxLifetime  time.Duration
	StatementTimeout time.Duration
	// MasterKey (32 bytes) encrypts secrets at rest.
	MasterKey []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Lock marks the database in use until Close, with a shared lock on
	// <Path>.lock that any number of stores hold together. Restore takes
	// it exclusively, so it never replaces a database a server has open,
	// and no server opens a database while it is being restored.
	Lock bool
	// DeferMigrations opens a database that is behind the schema as it
	// is, without migrating it (serve --upgrade=manual): PendingMigrations
	// lists what it lacks and Migrate applies it, once a snapshot is
	// taken. The code of the server must not run on it until then. A new,
	// empty database is migrated all the same: it has nothing to keep.
	DeferMigrations bool
}

// ErrInUse: the database is held by another process (a server, or a
// restore under way).
var ErrInUse = errors.New("the database is in use by another idenplane process")

// Open opens (creating if needed) and migrates the database.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	schema := cfg.Schema
	if IsPostgres(cfg.Path) {
		schema = cfg.PostgresSchema
	}
	migrations, err := parseMigrations(schema)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(cfg.MasterKey)
	if err != nil {
		return nil, err
	}
	var unlock func() error
	if cfg.Lock && !IsPostgres(cfg.Path) { // a server's own database: others reach it too
		if unlock, err = lockShared(cfg.Path); err != nil {
			return nil, fmt.Errorf("open database %s: %w", cfg.Path, err)
		}
	}
	s, err := open(ctx, cfg, aead, migrations)
	if err != nil {
		if unlock != nil {
			_ = unlock()
		}
		return nil, err
	}
	s.unlock = unlock
	return s, nil
}

func open(ctx context.Context, cfg Config, aead cipher.AEAD, migrations []migration) (*Store, error) {
	d := &sqliteDialect
	dsn := cfg.Path
	if IsPostgres(cfg.Path) {
		d = &postgresDialect
		if cfg.StatementTimeout > 0 {
			dsn = withParam(dsn, "statement_timeout", strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10))
		}
	} else if cfg.StatementTimeout > 0 {
		return nil, errors.New("open database: a statement timeout applies to PostgreSQL only")
	} else if err := createPrivateFile(cfg.Path); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	writer, err := sql.Open(d.driver, d.dsn(dsn, false))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	writer.SetConnMaxIdleTime(0)
	// The first connection switches the file to WAL; do it before readers open.
	if err := writer.PingContext(ctx); err != nil {
		writer.Close()
		return nil, fmt.Errorf("open database %s: %w", Redact(cfg.Path), err)
	}
	reader, err := sql.Open(d.driver, d.dsn(dsn, true))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	readers := cfg.Readers
	if readers <= 0 {
		readers = max(4, runtime.GOMAXPROCS(0)*2)
	}
	reader.SetMaxOpenConns(readers)
	reader.SetMaxIdleConns(readers)
	reader.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	reader.SetConnMaxIdleTime(readerMaxIdle)
	s := &Store{dialect: d, writerDB: writer, readerDB: reader, writer: newStmtCache(writer), reader: newStmtCache(reader),
		changes: &changes{}, aead: aead, now: cfg.Now, migrations: migrations, path: cfg.Path,
		closeOnce: &sync.Once{}, closeErr: new(error)}
	s.group = NewBatcher(minGroupGap, s.runGroup)
	s.w = &dbQuerier{stmts: s.writer, changes: s.changes, notify: d.notify}
	s.r = &dbQuerier{stmts: s.reader}
	if s.now == nil {
		s.now = time.Now
	}
	if d.notify != "" {
		s.changes.fleet = startFleet(ctx, d.dsn(dsn, false), s.changes)
	}
	if d.tryLock != "" {
		// Exclusive's locks are held on connections of their own: work
		// under a lock reads and writes through the other pools, and
		// holding one of theirs could leave it none.
		if s.lockDB, err = sql.Open(d.driver, d.dsn(dsn, true)); err != nil {
			s.Close()
			return nil, fmt.Errorf("open database: %w", err)
		}
		s.lockDB.SetMaxOpenConns(maxLockConns)
		s.lockDB.SetMaxIdleConns(1)
		s.lockDB.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	}
	behind, err := s.migrate(ctx, cfg.DeferMigrations)
	if err == nil && behind {
		err = s.verifyMasterKey(ctx)
	} else if err == nil {
		err = s.afterMigrate(ctx)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	if d == &sqliteDialect {
		// The writer's page cache holds the pages the migrations and the
		// checks above read and wrote, up to 2 MB (4 MB of RSS in the
		// driver's allocator): freed before the readers and the server's
		// own allocations take the allocator's memory, they are handed
		// back, about 1 MB of an idle server's. Nothing is written.
		if _, err := writer.ExecContext(ctx, "PRAGMA shrink_memory"); err != nil {
			s.Close()
			return nil, fmt.Errorf("open database: %w", mapErr(err))
		}
	}
	return s, nil
}

// readerMaxIdle closes a reader nobody has used for this long. Each holds
// its own parse of the schema and the pages it read, about 0.5 MB on
// SQLite, and the start-up's jobs and workers open every reader at once:
// an idle server kept them all. The pool hands out the reader used last,
// so under load the readers in use stay open; reopening one costs about
// 2.5 ms of CPU (the schema parsed again, its statements prepared again).
const readerMaxIdle = 3 * time.Second

// Close closes both pools, then releases the in-use lock. A second Close
// does nothing and answers the first's error.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { *s.closeErr = s.close() })
	return *s.closeErr
}

func (s *Store) close() error {
	if s.changes.fleet != nil {
		s.changes.fleet.close()
	}
	if s.lockDB != nil {
		_ = s.lockDB.Close()
	}
	indexErr := s.stopTextIndexer()
	s.writer.close()
	s.reader.close()
	err := errors.Join(indexErr, s.readerDB.Close(), s.writerDB.Close())
	if s.unlock != nil {
		err = errors.Join(err, s.unlock())
	}
	return err
}

// Checkpoint makes the database file alone hold every committed write,
// with nothing left in its -wal file: SQLite does so itself when the last
// connection to the file closes, but not while another process (a backup,
// a monitoring tool) still has it open. The rows waiting for the text
// indexes go in first, so that a clean stop's checkpoint is its last write.
func (s *Store) Checkpoint(ctx context.Context) error {
	if err := s.IndexTexts(ctx); err != nil {
		return err
	}
	return s.dialect.checkpoint(ctx, s.writerDB)
}

// Tx runs fn with a Store whose every method uses one write transaction,
// committed if fn returns nil and rolled back otherwise.
func (s *Store) Tx(ctx context.Context, fn func(tx *Store) error) error {
	return s.inTransaction(ctx, s.writer, nil, fn)
}

// ReadTx runs fn over one consistent snapshot of the database, without
// holding up writers.
func (s *Store) ReadTx(ctx context.Context, fn func(tx *Store) error) error {
	return s.inTransaction(ctx, s.reader, s.dialect.readTx, fn)
}

func (s *Store) inTransaction(ctx context.Context, stmts *stmtCache, opts *sql.TxOptions, fn func(tx *Store) error) (err error) {
	if s.inTx {
		return fn(s)
	}
	if s.trace != nil {
		name := "store.Tx"
		if opts != nil && opts.ReadOnly {
			name = "store.ReadTx"
		}
		var end func(error)
		ctx, end = s.trace(ctx, name)
		defer func() { end(err) }()
	}
	tx, err := stmts.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", mapErr(err))
	}
	q := &txQuerier{tx: tx, stmts: stmts, trace: s.trace, span: ctx}
	if stmts == s.writer {
		q.changes = s.changes
		if s.dialect.writeLock != "" {
			if _, err := tx.ExecContext(ctx, s.dialect.writeLock); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("take the write lock: %w", mapErr(err))
			}
		}
	}
	defer q.ended(ctx)
	inner := *s
	inner.w, inner.r, inner.inTx = q, q, true
	if err := fn(&inner); err != nil {
		_ = tx.Rollback()
		return err
	}
	if q.changed != changedNothing && s.changes.fleet != nil {
		// Delivered at the commit, and only if it commits.
		if _, err := tx.ExecContext(ctx, s.dialect.notify, fleetChannel, s.changes.fleet.payload(q.changed)); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("notify the fleet: %w", mapErr(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", mapErr(err))
	}
	return nil
}

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Path is the database the store opened: a SQLite file, or a PostgreSQL
// URL, password included (Redact it to show it).
func (s *Store) Path() string { return s.path }

// Postgres says whether the database is PostgreSQL rather than a SQLite
// file.
func (s *Store) Postgres() bool { return s.dialect == &postgresDialect }

// DBs exposes the pools to the metrics collector.
func (s *Store) DBs() (writer, reader *sql.DB) { return s.writerDB, s.readerDB }

func (s *Store) millis() int64 { return s.now().UnixMilli() }
