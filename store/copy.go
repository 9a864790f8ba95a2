package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
)

// Copy puts everything of one database into another, empty one: SQLite to
// PostgreSQL and back, or to another of the same kind. It reads the source
// in one snapshot, so a server may go on writing to it meanwhile, and
// writes the target in transactions of a batch of rows each, every table
// after the tables it references. Sealed secrets are copied as they are:
// the target opens with the source's master key. At the end it reads the
// target back and compares, table by table, the number of rows and a hash
// of them with the source's, then opens every secret in the target with
// the key.

var (
	// ErrTargetNotEmpty: the target holds data; copy fills an empty
	// database only.
	ErrTargetNotEmpty = errors.New("the target is not empty")
	// ErrNoSnapshot: the source cannot be read as one snapshot while
	// the server that has it open writes to it.
	ErrNoSnapshot = errors.New("the source cannot be read as one snapshot while it is in use")
)

// CopyConfig says what to copy where.
type CopyConfig struct {
	// From and To are SQLite files or postgres:// URLs. To is made (a
	// file) or migrated (an existing database) to the schema first.
	From, To string
	// Schema and PostgresSchema are schema.sql and schema_postgres.sql:
	// the source must be at their version.
	Schema, PostgresSchema string
	// MasterKey is the source's key, which the target's secrets are
	// sealed with as well.
	MasterKey []byte
	// BatchSize is the number of rows written in one transaction; 0: 500.
	BatchSize int
	// Progress, if set, is told after each batch how many of a table's
	// rows are written.
	Progress func(table string, done, total int64)
}

// CopiedTable is a table copied: its rows, and the hash of them both
// databases agree on.
type CopiedTable struct {
	Name     string
	Rows     int64
	Checksum string // SHA-256, hex
}

// CopyResult is what a copy did.
type CopyResult struct {
	SchemaVersion int
	Tables        []CopiedTable // in the order they were written
	// Secrets is how many sealed secrets in the target the key opened.
	Secrets int
}

const defaultCopyBatch = 500

// maxCopyParams caps the values of one INSERT, under SQLite's limit of
// 32766 and PostgreSQL's of 65535.
const maxCopyParams = 16000

// Copy copies cfg.From into cfg.To; see the top of this file. A target
// file it made is removed if the copy fails; rows it wrote into a target
// that existed are deleted.
func Copy(ctx context.Context, cfg CopyConfig) (*CopyResult, error) {
	if cfg.From == cfg.To || sameFile(cfg.From, cfg.To) {
		return nil, errors.New("copy: the source and the target are the same database")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = defaultCopyBatch
	}
	aead, err := newAEAD(cfg.MasterKey)
	if err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	src, err := openSnapshot(ctx, cfg.From)
	if err != nil {
		return nil, fmt.Errorf("copy: source %s: %w", Redact(cfg.From), err)
	}
	defer src.close()
	version, err := src.check(ctx, cfg, &Store{aead: aead})
	if err != nil {
		return nil, fmt.Errorf("copy: source %s: %w", Redact(cfg.From), err)
	}

	created := false
	if !IsPostgres(cfg.To) {
		_, err := os.Stat(cfg.To)
		created = errors.Is(err, fs.ErrNotExist)
	}
	if !created {
		if err := clearTarget(ctx, cfg.To); err != nil {
			return nil, fmt.Errorf("copy to %s: %w", Redact(cfg.To), err)
		}
	}
	dst, err := Open(ctx, Config{Path: cfg.To, Schema: cfg.Schema, PostgresSchema: cfg.PostgresSchema, MasterKey: cfg.MasterKey, Lock: true})
	if err != nil {
		if created {
			removeDatabase(cfg.To)
		}
		return nil, fmt.Errorf("copy: target %s: %w", Redact(cfg.To), err)
	}
	c := &copier{cfg: cfg, src: src, dst: dst}
	res, touched, err := c.run(ctx, version)
	if err != nil && touched && !created {
		if werr := c.wipe(context.WithoutCancel(ctx)); werr != nil {
			err = fmt.Errorf("%w; and removing what was copied failed too: %w", err, werr)
		}
	}
	if cerr := dst.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if created {
			removeDatabase(cfg.To)
		}
		return nil, fmt.Errorf("copy to %s: %w", Redact(cfg.To), err)
	}
	return res, nil
}

// clearTarget refuses a database that holds data, before anything
// migrates it, and removes the key check of one that holds none: made
// by a server or a migrate given another key than the source's, it
// would keep the target from opening with the source's.
func clearTarget(ctx context.Context, path string) error {
	d := &sqliteDialect
	if IsPostgres(path) {
		d = &postgresDialect
	}
	db, err := sql.Open(d.driver, d.dsn(path, false))
	if err != nil {
		return err
	}
	defer db.Close()
	tables, err := d.tables(ctx, db)
	if err != nil {
		return err
	}
	if err := checkEmpty(ctx, db, slices.Sorted(maps.Keys(tables))); err != nil {
		return err
	}
	if _, ok := tables["master_key_check"]; ok {
		if _, err := db.ExecContext(ctx, "DELETE FROM master_key_check"); err != nil {
			return err
		}
	}
	return db.Close()
}

// checkEmpty refuses a database with a row in any of tables but the
// schema's version and the key check.
func checkEmpty(ctx context.Context, q querier, tables []string) error {
	for _, name := range tables {
		if name == "master_key_check" || slices.Contains(notCopied, name) {
			continue
		}
		var one int
		err := q.QueryRowContext(ctx, "SELECT 1 FROM "+quoteIdent(name)+" LIMIT 1").Scan(&one)
		if err == nil {
			return fmt.Errorf("%w: its table %s has rows; copy fills an empty database only", ErrTargetNotEmpty, name)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	return nil
}

// sameFile says whether two settings name one SQLite file under two names.
func sameFile(a, b string) bool {
	if IsPostgres(a) || IsPostgres(b) {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// removeDatabase removes a SQLite file copy made, with its -wal and -shm
// files. Its .lock file stays, as lockFile says why.
func removeDatabase(path string) {
	_ = os.Remove(path)
	_ = removeSidecars(path)
}

// snapshot is the source, read in one transaction.
type snapshot struct {
	dialect *dialect
	db      *sql.DB
	tx      *sql.Tx
	unlock  func() error
}

// openSnapshot begins the one transaction the source is read in. A SQLite
// file is marked in use, as a server marks it, so that no restore
// replaces it meanwhile. In WAL mode, as a server keeps it, a reader's
// transaction is a snapshot that writers go on beside; in rollback-journal
// mode it would hold every writer up, so a file in that mode is copied
// only while no server has it open.
func openSnapshot(ctx context.Context, path string) (_ *snapshot, err error) {
	s := &snapshot{dialect: &postgresDialect}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if !IsPostgres(path) {
		s.dialect = &sqliteDialect
		if _, err := os.Stat(path); err != nil {
			return nil, err
		}
	}
	if s.db, err = sql.Open(s.dialect.driver, s.dialect.sourceDSN(path)); err != nil {
		return nil, err
	}
	s.db.SetMaxOpenConns(1)
	if !IsPostgres(path) {
		var mode string
		if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			return nil, err
		}
		if !strings.EqualFold(mode, "wal") {
			release, err := LockExclusive(path)
			if errors.Is(err, ErrInUse) {
				return nil, fmt.Errorf("%w: it is in %s journal mode, not WAL, and open in another process (stop it, then copy)", ErrNoSnapshot, mode)
			} else if err != nil {
				return nil, err
			}
			_ = release()
		}
		if s.unlock, err = lockShared(path); err != nil {
			return nil, err
		}
	}
	if s.tx, err = s.db.BeginTx(ctx, s.dialect.readTx); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSnapshot, err)
	}
	return s, nil
}

func (s *snapshot) close() {
	if s.tx != nil {
		_ = s.tx.Rollback()
	}
	if s.db != nil {
		_ = s.db.Close()
	}
	if s.unlock != nil {
		_ = s.unlock()
	}
}

// check reads the source's schema version, which must be this binary's,
// and proves the key opens its key check. The first read fixes the
// snapshot.
func (s *snapshot) check(ctx context.Context, cfg CopyConfig, keyed *Store) (int, error) {
	schema := cfg.Schema
	if s.dialect == &postgresDialect {
		schema = cfg.PostgresSchema
	}
	migrations, err := parseMigrations(schema)
	if err != nil {
		return 0, err
	}
	latest := migrations[len(migrations)-1].version
	var n, version int
	if err := s.tx.QueryRowContext(ctx, s.dialect.tableExists, "schema_version").Scan(&n); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoSnapshot, err)
	}
	if n == 0 {
		return 0, errors.New("it holds no idenplane database")
	}
	if err := s.tx.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if version != latest {
		return 0, fmt.Errorf("it is at schema version %d, this version of idenplane's is %d: copy a database at %d "+
			"(idenplane migrate brings an older one there)", version, latest, latest)
	}
	var sealed []byte
	err = s.tx.QueryRowContext(ctx, "SELECT sealed FROM master_key_check WHERE id = 1").Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return version, nil // never opened by a server; copy opens every secret at the end
	} else if err != nil {
		return 0, fmt.Errorf("read master key check: %w", err)
	}
	if _, err := keyed.open(sealed, "master_key_check"); err != nil {
		return 0, fmt.Errorf("the master key given does not open its secrets: %w", ErrWrongMasterKey)
	}
	return version, nil
}

// copier copies one snapshot into one target store.
type copier struct {
	cfg    CopyConfig
	src    *snapshot
	dst    *Store
	tables []*copyTable
}

// run copies and compares; touched says whether the target was changed.
func (c *copier) run(ctx context.Context, version int) (_ *CopyResult, touched bool, _ error) {
	dstVersion, err := c.dst.SchemaVersion(ctx)
	if err != nil {
		return nil, false, err
	}
	if dstVersion != version {
		return nil, false, fmt.Errorf("the target's schema is at version %d, the source's at %d", dstVersion, version)
	}
	srcTables, err := c.src.dialect.tables(ctx, c.src.tx)
	if err != nil {
		return nil, false, fmt.Errorf("source: %w", err)
	}
	dstTables, err := c.dst.dialect.tables(ctx, c.dst.writerDB)
	if err != nil {
		return nil, false, fmt.Errorf("target: %w", err)
	}
	if c.tables, err = planCopy(srcTables, dstTables); err != nil {
		return nil, false, err
	}
	// Empty before it was opened, it still is unless a server started
	// on it meanwhile.
	names := make([]string, len(c.tables))
	for i, t := range c.tables {
		names[i] = t.name
	}
	if err := checkEmpty(ctx, c.dst.writerDB, names); err != nil {
		return nil, false, err
	}
	// The target's key check, made when it was opened, makes way for the
	// source's: the same key opens both.
	if _, err := c.dst.writerDB.ExecContext(ctx, "DELETE FROM master_key_check"); err != nil {
		return nil, true, fmt.Errorf("target: %w", err)
	}
	res := &CopyResult{SchemaVersion: version}
	sums := map[string]*tableSum{}
	for _, t := range c.tables {
		if sums[t.name], err = c.copyTable(ctx, t); err != nil {
			return nil, true, fmt.Errorf("table %s: %w", t.name, err)
		}
	}
	if err := c.compare(ctx, sums, res); err != nil {
		return nil, true, err
	}
	if err := c.dst.checkMasterKey(ctx); err != nil {
		return nil, true, fmt.Errorf("target: %w", err)
	}
	if res.Secrets, err = c.dst.openEverySecret(ctx); err != nil {
		return nil, true, fmt.Errorf("target: %w", err)
	}
	return res, true, nil
}

// copyTable copies one table's rows in batches, each in a transaction of
// its own, and returns the sum of the source's rows.
func (c *copier) copyTable(ctx context.Context, t *copyTable) (*tableSum, error) {
	var total int64
	if err := c.src.tx.QueryRowContext(ctx, t.countSQL()).Scan(&total); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	sum := newTableSum()
	if total == 0 {
		return sum, nil
	}
	// Rows read in the order they are compared in are summed as they
	// pass; those read parents first are summed in a pass of their own.
	inOrder := len(t.selfRefs) == 0
	var written int64
	batch := make([][]any, 0, c.cfg.BatchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := c.insert(ctx, t, batch); err != nil {
			return err
		}
		written += int64(len(batch))
		batch = batch[:0]
		if c.cfg.Progress != nil {
			c.cfg.Progress(t.name, written, total)
		}
		return nil
	}
	err := readRows(ctx, c.src.tx, t, t.copySQL(c.src.dialect.bytewise), func(row []any) error {
		if inOrder {
			sum.add(row)
		}
		batch = append(batch, row)
		if len(batch) == c.cfg.BatchSize {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, err
	}
	for _, col := range t.identity {
		if err := c.dst.dialect.restartIdentity(ctx, c.dst.writerDB, t.name, col); err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
	}
	if !inOrder {
		if sum, err = c.sum(ctx, c.src.tx, c.src.dialect, t); err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
	}
	return sum, nil
}

// insert writes rows in one transaction, in INSERTs of up to
// maxCopyParams values, each prepared once.
func (c *copier) insert(ctx context.Context, t *copyTable, rows [][]any) error {
	width := len(t.names())
	per := max(1, min(c.dst.dialect.copyRowsPerInsert, maxCopyParams/width))
	tx, err := c.dst.writerDB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer tx.Rollback()
	stmts := map[int]*sql.Stmt{}
	args := make([]any, 0, per*width)
	for len(rows) > 0 {
		n := min(per, len(rows))
		stmt := stmts[n]
		if stmt == nil {
			if stmt, err = tx.PrepareContext(ctx, t.insertSQL(n, c.dst.dialect.overriding)); err != nil {
				return fmt.Errorf("target: %w", err)
			}
			defer stmt.Close()
			stmts[n] = stmt
		}
		args = args[:0]
		for _, row := range rows[:n] {
			args = append(args, row...)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		rows = rows[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	return nil
}

// sum reads a table of either database in order and sums its rows.
func (c *copier) sum(ctx context.Context, q querier, d *dialect, t *copyTable) (*tableSum, error) {
	sum := newTableSum()
	err := readRows(ctx, q, t, t.readSQL(d.bytewise), func(row []any) error {
		sum.add(row)
		return nil
	})
	return sum, err
}

// compare reads every table of the target back and compares its rows
// with the source's.
func (c *copier) compare(ctx context.Context, sums map[string]*tableSum, res *CopyResult) error {
	var differ []string
	for _, t := range c.tables {
		got, err := c.sum(ctx, c.dst.readerDB, c.dst.dialect, t)
		if err != nil {
			return fmt.Errorf("target: table %s: %w", t.name, err)
		}
		want := sums[t.name]
		if got.rows != want.rows {
			differ = append(differ, fmt.Sprintf("%s (%d rows in the source, %d in the copy)", t.name, want.rows, got.rows))
			continue
		}
		if got.sum() != want.sum() {
			differ = append(differ, fmt.Sprintf("%s (rows differ)", t.name))
			continue
		}
		res.Tables = append(res.Tables, CopiedTable{Name: t.name, Rows: got.rows, Checksum: got.sum()})
	}
	if len(differ) > 0 {
		return fmt.Errorf("the copy differs from the source in %s", strings.Join(differ, ", "))
	}
	return nil
}

// wipe deletes what a failed copy wrote into a target that was empty,
// dependents first, so that it can be copied into again.
func (c *copier) wipe(ctx context.Context) error {
	tx, err := c.dst.writerDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for i := len(c.tables) - 1; i >= 0; i-- {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+quoteIdent(c.tables[i].name)); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// readRows runs query, which reads t.names(), and hands fn each row in
// canonical values.
func readRows(ctx context.Context, q querier, t *copyTable, query string, fn func(row []any) error) error {
	kinds, names := t.kinds(), t.names()
	return eachRow(ctx, q, query, func(scan func(...any) error) error {
		raw := make([]any, len(kinds))
		ptrs := make([]any, len(kinds))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := scan(ptrs...); err != nil {
			return err
		}
		for i, k := range kinds {
			v, err := canonical(k, raw[i])
			if err != nil {
				return fmt.Errorf("column %s: %w", names[i], err)
			}
			raw[i] = v
		}
		return fn(raw)
	})
}

// eachRow runs query and calls fn for each row with the row's Scan.
func eachRow(ctx context.Context, q querier, query string, fn func(scan func(...any) error) error, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
