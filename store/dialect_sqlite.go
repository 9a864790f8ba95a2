package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDialect is SQLite through modernc.org/sqlite, cgo-free: the
// database is one file in WAL mode beside its -wal and -shm files.
var sqliteDialect = dialect{
	driver:       "sqlite",
	dsn:          sqliteDSN,
	tableExists:  "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1",
	columnExists: "SELECT count(*) FROM pragma_table_info($1) WHERE name = $2",
	constraint:   sqliteConstraint,
	checkpoint:   sqliteCheckpoint,
	wipeDeleted:  sqliteWipeDeleted,
	backupInto:   "VACUUM INTO $1",
	readTx:       &sql.TxOptions{ReadOnly: true}, // a WAL reader's transaction is a snapshot
	textIndexes:  true,

	tables:            sqliteTables,
	sourceDSN:         sqliteSourceDSN,
	copyRowsPerInsert: 1,
	bytewise:          "COLLATE BINARY",
	restartIdentity:   func(context.Context, querier, string, string) error { return nil }, // a rowid follows the largest
}

// sqliteDSN sets the per-connection pragmas. synchronous(FULL) makes every
// committed write durable before the API answers 2xx, even on power loss.
// The writer's transactions take the write lock at BEGIN (immediate), so
// that a transaction which reads and then writes never finds the lock
// taken halfway, and keeps its temporary files in memory: a statement
// inside a transaction that fires triggers or checks foreign keys keeps a
// statement journal, which would otherwise spill to a file and cost a
// bulk import a write and a read of it a statement. Readers are
// read-only, each with a page cache of readerCacheKiB.
func sqliteDSN(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "synchronous(FULL)")
	if readOnly {
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", readerCacheKiB))
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		q.Add("_pragma", "temp_store(MEMORY)")
	}
	return "file:" + path + "?" + q.Encode()
}

// readerCacheKiB is a reader's page cache, a quarter of SQLite's default
// 2000 KiB. The driver's allocator gives each cached 4 KiB page an 8 KiB
// slot, so the default costs 4 MiB a connection, and a scan of a large
// realm fills every reader's: up to 16 MB of RSS on four readers, as
// much as the Go heap besides the password hashes. A page a reader misses
// comes from the operating system's file cache, which the connections
// share.
const readerCacheKiB = 512

// sqliteFileDSN opens a backup file, or a copy of one, in rollback-journal
// mode, as VACUUM INTO wrote it. wipeDeleted overwrites what is deleted,
// so that it cannot be read back from the file's free pages.
func sqliteFileDSN(path string, wipeDeleted bool) string {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)"
	if wipeDeleted {
		dsn += "&_pragma=secure_delete(ON)"
	}
	return dsn
}

func sqliteConstraint(err error) (constraint, string) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return noConstraint, ""
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return uniqueConstraint, sqliteConflictColumn(se.Error())
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return referenceMissing, ""
	}
	return noConstraint, ""
}

// sqliteConflictColumn reads the clashing column from SQLite's message:
// "UNIQUE constraint failed: users.realm_id, users.email".
func sqliteConflictColumn(msg string) string {
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

// sqliteWipeDeleted sets secure_delete on the writer's one connection.
func sqliteWipeDeleted(ctx context.Context, writer *sql.DB, on bool) error {
	pragma := "PRAGMA secure_delete = OFF"
	if on {
		pragma = "PRAGMA secure_delete = ON"
	}
	if _, err := writer.ExecContext(ctx, pragma); err != nil {
		return fmt.Errorf("secure_delete: %w", err)
	}
	return nil
}

// sqliteCheckpoint moves every committed write from the WAL into the
// database file and empties the WAL, so that the file alone is the whole
// database. SQLite does this itself when the last connection to the file
// closes, but not while another process (a backup, a monitoring tool)
// still has it open. It waits, up to the busy timeout, for other
// processes' readers.
func sqliteCheckpoint(ctx context.Context, writer *sql.DB) error {
	var busy, logFrames, checkpointed int
	err := writer.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &checkpointed)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if busy != 0 {
		return errCheckpointBusy
	}
	return nil
}

// errCheckpointBusy: another process kept reading the database through a
// checkpoint, so its -wal file still holds recent writes.
var errCheckpointBusy = errors.New("checkpoint: another process kept reading the database; its -wal file still holds recent writes")

// sqliteSourceDSN reads a database without writing to it, and without
// the journal mode pragma, which would turn a file in rollback-journal
// mode into WAL.
func sqliteSourceDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=query_only(1)"
}

// sqliteTables describes the tables of the main database, SQLite's own
// (sqlite_*) aside. A table keeps a rowid of its own unless it is
// WITHOUT ROWID or its rowid is its INTEGER PRIMARY KEY column.
func sqliteTables(ctx context.Context, q querier) (map[string]*schemaTable, error) {
	tables := map[string]*schemaTable{}
	withoutRowid := map[string]bool{}
	err := eachRow(ctx, q, `SELECT name, wr FROM pragma_table_list
		WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`, func(scan func(...any) error) error {
		var name string
		var wr bool
		if err := scan(&name, &wr); err != nil {
			return err
		}
		tables[name] = &schemaTable{name: name}
		withoutRowid[name] = wr
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	keys, integerKey := map[string]int{}, map[string]bool{} // primary key columns; one declared INTEGER
	err = eachRow(ctx, q, `SELECT m.name, c.name, c.type, c.pk FROM sqlite_master m JOIN pragma_table_info(m.name) c
		WHERE m.type = 'table' ORDER BY m.name, c.cid`, func(scan func(...any) error) error {
		var table, name, typ string
		var pk int
		if err := scan(&table, &name, &typ, &pk); err != nil {
			return err
		}
		t := tables[table]
		if t == nil {
			return nil
		}
		kind, err := kindOfType(typ)
		if err != nil {
			return fmt.Errorf("table %s column %s: %w", table, name, err)
		}
		t.columns = append(t.columns, schemaColumn{name: name, kind: kind, pk: pk})
		if pk > 0 {
			keys[table]++
			integerKey[table] = integerKey[table] || strings.EqualFold(typ, "INTEGER")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	lastID := map[string]int{}
	err = eachRow(ctx, q, `SELECT m.name, f.id, f."table", f."from", f."to" FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq`, func(scan func(...any) error) error {
		var table, ref, from string
		var id int
		var to sql.NullString
		if err := scan(&table, &id, &ref, &from, &to); err != nil {
			return err
		}
		t := tables[table]
		if t == nil {
			return nil
		}
		if len(t.refs) == 0 || lastID[table] != id {
			t.refs = append(t.refs, schemaRef{table: ref})
			lastID[table] = id
		}
		r := &t.refs[len(t.refs)-1]
		r.from = append(r.from, from)
		if to.Valid {
			r.to = append(r.to, to.String)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	for name, t := range tables {
		named := slices.ContainsFunc(t.columns, func(c schemaColumn) bool { return strings.EqualFold(c.name, "rowid") })
		aliased := keys[name] == 1 && integerKey[name]
		t.rowid = !withoutRowid[name] && !aliased && !named
	}
	return tables, nil
}
