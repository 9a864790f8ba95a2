package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Several servers on one PostgreSQL database (docs/postgres.md) make one
// fleet. What SQLite's single writer gave one process, the store gives
// the fleet:
//
//   - Every write transaction begins by taking one advisory lock of the
//     database (the dialect's writeLock) and holds it to its end, as a
//     SQLite writer holds the file's lock from BEGIN IMMEDIATE. Each
//     read-then-write inside a transaction (a failure count, a code used
//     once, a flow's next step) therefore sees no other transaction's
//     write between its read and its write, on any server. A statement
//     outside a transaction is one atomic statement on its own.
//   - The generations that say whether a cached value is current move on
//     every server: a transaction that changed cached data or may have
//     ended a token sends a notification, delivered at its commit, and
//     each server listens for the others'. A server that is not
//     listening (before its first connection, after losing it) cannot
//     know what the others change, so its generations move on every read
//     and its caches hold nothing until it listens again.
//   - Work that must happen once (the hourly upkeep, mail delivery, the
//     directories' syncs) runs under an advisory lock (Exclusive), or
//     claims its period (ClaimJob).

// fleetChannel is the notification channel of the generations.
const fleetChannel = "idenplane_changes"

// maxLockConns bounds the connections holding Exclusive's locks at once:
// one for each kind of work running (mail, webhooks, a directory's sync);
// more wait for one to end.
const maxLockConns = 4

// fleetRetry is how long the listener waits before it connects again.
const fleetRetry = time.Second

// fleet is a server's part in the fleet: what it sends, and whether it
// hears the others.
type fleet struct {
	origin    string // this store's, in every notification it sends
	listening atomic.Bool
	stop      context.CancelFunc
	done      chan struct{}
}

// startFleet starts listening to the other servers on dsn; it moves
// changes' generations for each of their notifications. The first
// connection is made before it returns, so that a store that opens with
// its database reachable hears the fleet from its first request.
func startFleet(ctx context.Context, dsn string, c *changes) *fleet {
	var id [8]byte
	_, _ = rand.Read(id[:])
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &fleet{origin: hex.EncodeToString(id[:]), stop: cancel, done: make(chan struct{})}
	conn := f.connect(ctx, dsn, c)
	go func() {
		defer close(f.done)
		for {
			if conn != nil {
				f.listen(run, conn, c)
				conn.Close(context.WithoutCancel(run))
			}
			select {
			case <-run.Done():
				return
			case <-time.After(fleetRetry):
			}
			conn = f.connect(run, dsn, c)
		}
	}()
	return f
}

// connect opens the listening connection, or answers nil.
func (f *fleet) connect(ctx context.Context, dsn string, c *changes) *pgx.Conn {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil
	}
	if _, err := conn.Exec(ctx, "LISTEN "+fleetChannel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil
	}
	// What the others changed while this server was not listening is
	// unknown: everything cached before is suspect.
	c.bump(changedCached)
	f.listening.Store(true)
	return conn
}

// listen hears notifications on conn until it fails.
func (f *fleet) listen(ctx context.Context, conn *pgx.Conn, c *changes) {
	defer f.listening.Store(false)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		origin, ch, ok := parseFleetPayload(n.Payload)
		if ok && origin != f.origin {
			c.bump(ch)
		}
	}
}

// close stops listening.
func (f *fleet) close() {
	f.stop()
	<-f.done
}

// payload is a notification's text: the sender and what changed.
func (f *fleet) payload(ch change) string {
	return f.origin + ":" + strconv.Itoa(int(ch))
}

func parseFleetPayload(p string) (origin string, ch change, ok bool) {
	origin, n, found := strings.Cut(p, ":")
	v, err := strconv.Atoi(n)
	if !found || err != nil || v <= int(changedNothing) || v > int(changedCached) {
		return "", changedNothing, false
	}
	return origin, change(v), true
}

// deaf says whether changes made by other servers may go unheard: the
// store is one of a fleet and not listening now.
func (c *changes) deaf() bool {
	return c.fleet != nil && !c.fleet.listening.Load()
}

// share tells the other servers, outside any transaction, that a
// statement has changed ch; the statement has already committed.
func (c *changes) share(ctx context.Context, writer *sql.DB, notify string, ch change) {
	if c.fleet == nil || ch == changedNothing {
		return
	}
	// Should it be lost, the others' caches still expire (lookupTTL).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fleetRetry*5)
	defer cancel()
	_, _ = writer.ExecContext(ctx, notify, fleetChannel, c.fleet.payload(ch))
}

// Exclusive runs fn unless another server of the fleet is running work of
// the same name, and says whether it ran. On SQLite one server owns the
// file, and fn always runs.
func (s *Store) Exclusive(ctx context.Context, name string, fn func(ctx context.Context) error) (ran bool, err error) {
	if s.dialect.tryLock == "" {
		return true, fn(ctx)
	}
	// A connection of the lock pool holds the lock: fn reads and writes
	// through the other pools, and must find them free. Its transactions
	// are read-only by default, which advisory locks do not mind.
	conn, err := s.lockDB.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", name, mapErr(err))
	}
	defer conn.Close()
	var got bool
	if err := conn.QueryRowContext(ctx, s.dialect.tryLock, name).Scan(&got); err != nil {
		return false, fmt.Errorf("lock %s: %w", name, mapErr(err))
	}
	if !got {
		return false, nil
	}
	defer func() {
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), s.dialect.unlock, name); uerr != nil {
			// The connection must not go back to the pool holding the lock:
			// dropped, it releases it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return true, fn(ctx)
}

// Worker runs pass under Exclusive's lock named name, at once, then every
// interval and whenever wake fires, until ctx ends; it returns a function
// that waits for it to stop. It is the loop of the servers' outboxes (mail,
// webhooks): a fleet sends from one of them at a time.
func (s *Store) Worker(ctx context.Context, name string, interval time.Duration, wake <-chan struct{},
	pass func(ctx context.Context)) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			_, _ = s.Exclusive(ctx, name, func(ctx context.Context) error {
				pass(ctx)
				return nil
			})
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-wake:
			}
		}
	})
	return wg.Wait
}

// ClaimJob says whether this server should run the periodic job name now:
// on a fleet, yes for the first server to ask once every has passed since
// the job last began, and no for the others; on SQLite, always.
func (s *Store) ClaimJob(ctx context.Context, name string, now time.Time, every time.Duration) (bool, error) {
	if s.changes.fleet == nil {
		return true, nil
	}
	res, err := s.w.ExecContext(ctx, `INSERT INTO job_runs (name, started_at) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET started_at = excluded.started_at WHERE job_runs.started_at <= $3`,
		name, now.UnixMilli(), now.Add(-every).UnixMilli())
	n, err := rowsAffected(res, err, "claim job "+name)
	return n == 1, err
}

// InFleet says whether the store is on a database that several servers
// may share.
func (s *Store) InFleet() bool { return s.changes.fleet != nil }
