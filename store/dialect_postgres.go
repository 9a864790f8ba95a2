package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// postgresDialect is PostgreSQL through pgx, cgo-free: a database named by
// a postgres:// URL, with its own schema file (schema_postgres.sql), whose
// text columns compare bytewise (COLLATE "C") as SQLite's do.
var postgresDialect = dialect{
	driver: "pgx",
	dsn:    postgresDSN,
	tableExists: `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name = $1`,
	columnExists: `SELECT count(*) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`,
	constraint:  postgresConstraint,
	checkpoint:  func(context.Context, *sql.DB) error { return nil }, // a commit is durable in the server's own files
	wipeDeleted: func(context.Context, *sql.DB, bool) error { return nil },
	readTx:      &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
	likeIsExact: true,
	// The key is any constant of the fleet's own: "idenplan" in ASCII.
	writeLock: "SELECT pg_advisory_xact_lock(7594885051357716846)",
	notify:    "SELECT pg_notify($1, $2)",
	tryLock:   "SELECT pg_try_advisory_lock(hashtextextended($1, 0))",
	unlock:    "SELECT pg_advisory_unlock(hashtextextended($1, 0))",

	tables:            postgresTables,
	sourceDSN:         func(dsn string) string { return postgresDSN(dsn, true) },
	copyRowsPerInsert: 500,
	bytewise:          `COLLATE "C"`,
	overriding:        "OVERRIDING SYSTEM VALUE",
	restartIdentity:   postgresRestartIdentity,
}

// IsPostgres says whether a database setting names a PostgreSQL database
// (a postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// postgresDSN keeps the URL as given, with synchronous_commit on (a commit
// answered is on disk) and, for the readers, transactions read-only by
// default.
func postgresDSN(dsn string, readOnly bool) string {
	dsn = withParam(dsn, "synchronous_commit", "on")
	// The planner overestimates the recursive role and group queries on
	// small tables, past jit_above_cost, and compiling them took 20 to
	// 200 ms of a query that runs in 0.1: JIT is for analytics, not for
	// a server's short statements. A URL that sets jit keeps its own.
	if u, err := url.Parse(dsn); err == nil && !u.Query().Has("jit") {
		dsn = withParam(dsn, "jit", "off")
	}
	if readOnly {
		dsn = withParam(dsn, "default_transaction_read_only", "on")
	}
	return dsn
}

// withParam sets a parameter of a database URL (pgx passes those it does
// not know to the server as settings).
func withParam(dsn, name, value string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn // pgx reports it, without the password
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// Unavailable says whether err is the database being out of reach (a
// connection refused, cut or closed by a server shutting down), rather
// than anything about the request: the caller may try again later.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01..57P03: the server shuts
		// down or cannot take connections yet.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" ||
			lostRace(err)
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || pgconn.SafeToRetry(err)
}

// lostRace says whether PostgreSQL undid a statement, or its whole
// transaction, to let a concurrent one through: a serialization failure
// (40001) or a deadlock (40P01). Nothing of it was written; run again, it
// meets the other's outcome. A statement outside a transaction is run
// again at once (dbQuerier); a transaction's request is answered as
// unavailable for a moment, to be retried by its client.
func lostRace(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

func postgresConstraint(err error) (constraint, string) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return noConstraint, ""
	}
	switch pe.Code {
	case "23505": // unique_violation
		return uniqueConstraint, postgresConflictColumn(pe.Detail)
	case "23503": // foreign_key_violation
		return referenceMissing, ""
	}
	return noConstraint, ""
}

// postgresConflictColumn reads the clashing column from the error's
// detail, "Key (realm_id, email)=(r1, a@example.test) already exists.":
// the last, and the column of an expression (lower(name)).
func postgresConflictColumn(detail string) string {
	rest, ok := strings.CutPrefix(detail, "Key (")
	if !ok {
		return ""
	}
	cols, _, ok := strings.Cut(rest, ")=(")
	if !ok {
		return ""
	}
	parts := strings.Split(cols, ",")
	last := strings.TrimSpace(parts[len(parts)-1])
	if i := strings.LastIndexByte(last, '('); i >= 0 {
		last = strings.TrimRight(last[i+1:], ")")
	}
	return strings.TrimSpace(last)
}

// Redact is a database setting fit for a log or a message: a URL without
// its password.
func Redact(db string) string {
	if !IsPostgres(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// postgresTables describes the tables of the current schema, from the
// catalog: three queries, where information_schema's views would take one
// a table. A column named rowid that is an identity column is the
// table's rowid (schema_postgres.sql's header says why it exists).
func postgresTables(ctx context.Context, q querier) (map[string]*schemaTable, error) {
	tables := map[string]*schemaTable{}
	err := eachRow(ctx, q, `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attidentity <> '',
			a.attgenerated <> '', coalesce(array_position(k.conkey, a.attnum), 0)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p'
		WHERE c.relkind IN ('r', 'p')
		ORDER BY c.relname, a.attnum`, func(scan func(...any) error) error {
		var table, name, typ string
		var identity, generated bool
		var pk int
		if err := scan(&table, &name, &typ, &identity, &generated, &pk); err != nil {
			return err
		}
		t := tables[table]
		if t == nil {
			t = &schemaTable{name: table}
			tables[table] = t
		}
		switch {
		case generated:
		case name == "rowid" && identity:
			t.rowid = true
			t.identity = append(t.identity, name)
		default:
			kind, err := kindOfType(typ)
			if err != nil {
				return fmt.Errorf("table %s column %s: %w", table, name, err)
			}
			t.columns = append(t.columns, schemaColumn{name: name, kind: kind, pk: pk})
			if identity {
				t.identity = append(t.identity, name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list columns: %w", err)
	}
	err = eachRow(ctx, q, `SELECT c.relname, r.relname,
			(SELECT string_agg(a.attname, ',' ORDER BY u.i) FROM unnest(k.conkey) WITH ORDINALITY u(num, i)
				JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.num),
			(SELECT string_agg(a.attname, ',' ORDER BY u.i) FROM unnest(k.confkey) WITH ORDINALITY u(num, i)
				JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.num)
		FROM pg_constraint k
		JOIN pg_class c ON c.oid = k.conrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
		JOIN pg_class r ON r.oid = k.confrelid
		WHERE k.contype = 'f'
		ORDER BY c.relname, k.conname`, func(scan func(...any) error) error {
		var table, ref, from, to string
		if err := scan(&table, &ref, &from, &to); err != nil {
			return err
		}
		if t := tables[table]; t != nil {
			t.refs = append(t.refs, schemaRef{table: ref, from: strings.Split(from, ","), to: strings.Split(to, ",")})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	return tables, nil
}

// postgresRestartIdentity sets the sequence of an identity column to go on
// after the largest value in it: values copied in with OVERRIDING SYSTEM
// VALUE leave it where it was.
func postgresRestartIdentity(ctx context.Context, q querier, table, column string) error {
	_, err := q.ExecContext(ctx, fmt.Sprintf("SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(%s), 0) + 1, false) FROM %s",
		quoteIdent(column), quoteIdent(table)), quoteIdent(table), column)
	if err != nil {
		return fmt.Errorf("restart the identity of %s.%s: %w", table, column, err)
	}
	return nil
}
