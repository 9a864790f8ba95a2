package store

import (
	"context"
	"errors"
	"fmt"
)

// sealOutbox takes out of clear the mail bodies that rows written before
// the sealed column kept in html_body and text_body: a pending mail's are
// sealed, a sent or abandoned mail's dropped. SQLite leaves an overwritten
// value's bytes in the page's free space, so the rewrite runs with
// deleted content wiped, and a checkpoint then puts the wiped pages in the
// file and empties the -wal file. Once done, the query finds no row.
func (s *Store) sealOutbox(ctx context.Context) error {
	var n int
	if err := s.w.QueryRowContext(ctx, s.dialect.columnExists, "email_outbox", "sealed").Scan(&n); err != nil {
		return fmt.Errorf("seal outbox: %w", mapErr(err))
	}
	if n == 0 {
		return nil // a schema before the column, as the migration tests open
	}
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM email_outbox WHERE html_body <> '' OR text_body <> ''`).Scan(&n); err != nil {
		return fmt.Errorf("seal outbox: %w", mapErr(err))
	}
	if n == 0 {
		return nil
	}
	if err := s.dialect.wipeDeleted(ctx, s.writerDB, true); err != nil {
		return fmt.Errorf("seal outbox: %w", err)
	}
	err := s.Tx(ctx, func(tx *Store) error {
		rows, err := tx.w.QueryContext(ctx, `SELECT id, html_body, text_body, sent_at IS NULL AND failed_at IS NULL
			FROM email_outbox WHERE html_body <> '' OR text_body <> ''`)
		if err != nil {
			return mapErr(err)
		}
		type clear struct {
			id, html, text string
			pending        bool
		}
		var all []clear
		for rows.Next() {
			var c clear
			if err := rows.Scan(&c.id, &c.html, &c.text, &c.pending); err != nil {
				rows.Close()
				return mapErr(err)
			}
			all = append(all, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr(err)
		}
		for _, c := range all {
			var sealed []byte
			if c.pending {
				if sealed, err = tx.sealBody(c.id, c.html, c.text); err != nil {
					return err
				}
			}
			if _, err := tx.w.ExecContext(ctx, `UPDATE email_outbox SET html_body = '', text_body = '', sealed = $1
				WHERE id = $2`, sealed, c.id); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	err = errors.Join(err, s.dialect.wipeDeleted(ctx, s.writerDB, false))
	if err == nil {
		// Another process reading the file (a backup, the sqlite3 shell)
		// keeps the old pages in the -wal file until a later checkpoint
		// (SQLite's own, or the last close): the rows are sealed, which
		// must not keep the server from starting.
		if err = s.dialect.checkpoint(ctx, s.writerDB); errors.Is(err, errCheckpointBusy) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("seal outbox: %w", err)
	}
	return nil
}
