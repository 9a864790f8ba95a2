package store

import (
	"context"
	"fmt"
)

// The backends, as Backend names them.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Backend names the database the store is on: BackendSQLite or
// BackendPostgres.
func (s *Store) Backend() string {
	if s.dialect.driver == postgresDialect.driver {
		return BackendPostgres
	}
	return BackendSQLite
}

// DatabaseSize is the size of the database in bytes: on SQLite its pages
// (page_count × page_size, what the file holds once the write-ahead log
// is checkpointed into it), on PostgreSQL pg_database_size.
func (s *Store) DatabaseSize(ctx context.Context) (int64, error) {
	q := "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
	if s.Backend() == BackendPostgres {
		q = "SELECT pg_database_size(current_database())"
	}
	var n int64
	if err := s.r.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("database size: %w", mapErr(err))
	}
	return n, nil
}
