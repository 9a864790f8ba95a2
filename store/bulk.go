package store

import (
	"context"
	"fmt"
)

// CreateUsers inserts many users in one transaction through one prepared
// statement: what seeding a large realm needs, where a transaction per
// row would wait for a disk flush per row. Constraints hold as for
// CreateUser; the first violation rolls the whole batch back.
func (s *Store) CreateUsers(ctx context.Context, users []*User) error {
	query := "INSERT INTO users (" + userWriteColumns + ") VALUES (" + placeholders(16) + ")"
	return s.Tx(ctx, func(tx *Store) error {
		for _, u := range users {
			_, err := tx.w.ExecContext(ctx, query, userWriteValues(u)...)
			if err != nil {
				return fmt.Errorf("create user %s: %w", u.Username, mapErr(err))
			}
		}
		return nil
	})
}

// AddLoginEvents records events in one transaction: one disk flush for
// many sign-ins.
func (s *Store) AddLoginEvents(ctx context.Context, events []*LoginEvent) error {
	return s.Tx(ctx, func(tx *Store) error {
		for _, e := range events {
			if err := tx.AddLoginEvent(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}
