package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The trigram indexes of the texts SCIM searches by substring (schema
// version 54) are written here, not by the triggers: FTS5 writes its
// pending terms out at every statement's savepoint, so that a trigger
// writing the index made each user of a bulk import cost a small segment
// of its own and its merges. The triggers list the changed rowids in a
// pending table instead; textIndexer moves them into the index a batch
// at a time, one segment a batch. Until then a search reads the pending
// rows beside those the index finds (trigramRows), so a change is never
// missed, only tested by the exact comparison rather than narrowed.

// A trigramTable is an FTS5 index of a table's texts, and what fills it.
type trigramTable struct {
	name string // the FTS5 table; its pending rowids are in name_pending
	// columns are the FTS5 table's, and texts what each holds, read from
	// the indexed row aliased t.
	columns, texts string
	source         string // the indexed table
}

var trigramTables = []trigramTable{
	{name: "users_trigrams", source: "users", columns: "username, email, first_name_fold, last_name_fold",
		texts: "t.username, t.email, t.first_name_fold, t.last_name_fold"},
	{name: "scim_user_values_trigrams", source: "scim_user_values", columns: "value, fold",
		texts: "CASE WHEN t.value = t.fold THEN '' ELSE t.value END, t.fold"},
}

const (
	// textIndexInterval is how often the indexer looks for pending rows:
	// long enough that a burst of writes goes in as one batch, short
	// enough that searches seldom read many pending rows.
	textIndexInterval = time.Second
	// textIndexBatch is how many pending rows one transaction moves, so
	// that an import's hundred thousand rows do not hold the writer for
	// the seconds the whole would take.
	textIndexBatch = 5000
)

// textIndexer moves the pending rows into the indexes in the background,
// from Open (or Migrate) to Close.
type textIndexer struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// startTextIndexer starts the indexer where the schema has the indexes:
// SQLite's, from version 54.
func (s *Store) startTextIndexer(ctx context.Context) error {
	if !s.dialect.textIndexes || s.texts != nil {
		return nil
	}
	var n int
	if err := s.r.QueryRowContext(ctx, s.dialect.tableExists, "users_trigrams_pending").Scan(&n); err != nil {
		return fmt.Errorf("find the text indexes: %w", mapErr(err))
	}
	if n == 0 {
		return nil // a database behind the schema (tests of older versions)
	}
	ix := &textIndexer{stop: make(chan struct{}), done: make(chan struct{})}
	s.texts = ix
	go func() {
		defer close(ix.done)
		t := time.NewTicker(textIndexInterval)
		defer t.Stop()
		for {
			select {
			case <-ix.stop:
				return
			case <-t.C:
			}
			// A failure leaves the rows pending, which searches read all
			// the same; the next tick tries again.
			if s.textsPending(context.Background()) {
				_ = s.IndexTexts(context.Background())
			}
		}
	}()
	return nil
}

// stopTextIndexer stops the indexer and moves what is still pending, so
// that a database closed cleanly holds no pending rows.
func (s *Store) stopTextIndexer() error {
	if s.texts == nil {
		return nil
	}
	s.texts.once.Do(func() { close(s.texts.stop) })
	<-s.texts.done
	return s.IndexTexts(context.Background())
}

// textsPending says whether a row waits for the indexes, read without
// taking the writer (an idle server's ticks write nothing). True on an
// error, which IndexTexts then meets and answers.
func (s *Store) textsPending(ctx context.Context) bool {
	var pending bool
	err := s.r.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM users_trigrams_pending) OR "+
		"EXISTS (SELECT 1 FROM scim_user_values_trigrams_pending)").Scan(&pending)
	return pending || err != nil
}

// IndexTexts moves every pending row into the trigram indexes, a batch
// per transaction. Nothing where the backend has no such indexes.
func (s *Store) IndexTexts(ctx context.Context) error {
	if s.texts == nil {
		return nil
	}
	var errs []error
	for _, tt := range trigramTables {
		for {
			moved, err := s.indexTextBatch(ctx, tt)
			if err != nil {
				errs = append(errs, fmt.Errorf("index the texts of %s: %w", tt.source, err))
				break
			}
			if moved < textIndexBatch {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// indexTextBatch moves up to textIndexBatch of tt's pending rows, those
// of the lowest rowids, into its index: each row's old texts, if indexed,
// are deleted, and the row's texts as they are now, if it still exists,
// are indexed. A contentless FTS5 table cannot take a row's trigrams off
// its pages (it does not know them, so secure-delete does nothing): it
// marks the row deleted, unsearchable, and the trigrams go when their
// segment is merged, at once when a tenth of its rows are deleted
// (FTS5's deletemerge). Until then they are like the deleted row itself,
// which stays in SQLite's free pages until they are reused.
func (s *Store) indexTextBatch(ctx context.Context, tt trigramTable) (int, error) {
	pending := tt.name + "_pending"
	var moved int
	err := s.Tx(ctx, func(tx *Store) error {
		var last sql.NullInt64
		if err := tx.w.QueryRowContext(ctx, "SELECT max(id), count(*) FROM (SELECT id FROM "+pending+
			" ORDER BY id LIMIT $1)", textIndexBatch).Scan(&last, &moved); err != nil || moved == 0 {
			return mapErr(err)
		}
		for _, q := range []string{
			"DELETE FROM " + tt.name + " WHERE rowid IN (SELECT id FROM " + pending + " WHERE id <= $1)",
			"INSERT INTO " + tt.name + " (rowid, " + tt.columns + ") SELECT t.rowid, " + tt.texts +
				" FROM " + pending + " p CROSS JOIN " + tt.source + " t WHERE p.id <= $1 AND t.rowid = p.id",
			"DELETE FROM " + pending + " WHERE id <= $1",
		} {
			if _, err := tx.w.ExecContext(ctx, q, last.Int64); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	return moved, err
}
