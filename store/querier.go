package store

import (
	"context"
	"database/sql"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Every statement runs prepared: the SQLite driver parses a statement
// given as text on every call, which showed as a quarter of the CPU of a
// token grant. stmtCache keeps one *sql.Stmt per SQL text and pool, which
// database/sql prepares once per connection.
//
// The writer also counts the changes to data the server caches (realms,
// clients, scopes, roles, groups, users, keys): Generation moves after
// each such write commits, so a cache entry read under an older
// generation is known to be stale. RevocationGeneration moves with it,
// and also after a write that may end an access token: a session ended,
// an access token revoked.

// maxCachedStmts bounds the cache; the store has a few hundred distinct
// statements, and statements built from filters are few in kind.
const maxCachedStmts = 1024

type stmtCache struct {
	db    *sql.DB
	mu    sync.RWMutex
	stmts map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}}
}

func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stmts[query]
}

// prepare returns the statement for query, preparing it on the pool
// first; nil when it cannot be kept (a script of several statements, a
// full cache, a statement that does not prepare), and the caller runs the
// text as it is. It takes a connection of the pool, so it must not be
// called while holding one: inside a transaction, statements are prepared
// after it ends (see txQuerier.misses).
func (c *stmtCache) prepare(ctx context.Context, query string) *sql.Stmt {
	if st := c.lookup(query); st != nil {
		return st
	}
	if strings.Contains(query, ";") {
		return nil
	}
	c.mu.RLock()
	full := len(c.stmts) >= maxCachedStmts
	c.mu.RUnlock()
	if full {
		return nil
	}
	st, err := c.db.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.stmts[query]; old != nil {
		st.Close()
		return old
	}
	c.stmts[query] = st
	return st
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		st.Close()
		delete(c.stmts, q)
	}
}

// dbQuerier runs statements on a pool outside any transaction.
type dbQuerier struct {
	stmts   *stmtCache
	changes *changes // nil for the readers
	notify  string   // the dialect's
	trace   Tracer   // nil: not traced
}

func (d *dbQuerier) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	defer d.changes.after(ctx, d, query, false)
	if d.trace != nil {
		var end func(error)
		ctx, end = d.trace(ctx, statementName(query))
		defer func() { end(err) }()
	}
	for attempt := 1; ; attempt++ {
		if st := d.stmts.prepare(ctx, query); st != nil {
			res, err = st.ExecContext(ctx, args...)
		} else {
			res, err = d.stmts.db.ExecContext(ctx, query, args...)
		}
		if attempt == maxStatementAttempts || !lostRace(err) {
			return res, err
		}
	}
}

// maxStatementAttempts bounds the runs of a statement outside a
// transaction that PostgreSQL undid for a concurrent one (lostRace).
const maxStatementAttempts = 3

func (d *dbQuerier) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	defer d.changes.after(ctx, d, query, true)
	if d.trace != nil {
		var end func(error)
		ctx, end = d.trace(ctx, statementName(query))
		defer func() { end(err) }()
	}
	if st := d.stmts.prepare(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return d.stmts.db.QueryContext(ctx, query, args...)
}

func (d *dbQuerier) QueryRowContext(ctx context.Context, query string, args ...any) (row *sql.Row) {
	defer d.changes.after(ctx, d, query, true)
	if d.trace != nil {
		var end func(error)
		ctx, end = d.trace(ctx, statementName(query))
		defer func() { end(row.Err()) }()
	}
	if st := d.stmts.prepare(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return d.stmts.db.QueryRowContext(ctx, query, args...)
}

// txQuerier runs statements in one transaction: those already prepared
// on the pool run prepared on the transaction's connection, others as
// text, remembered in misses to be prepared once the transaction ends.
type txQuerier struct {
	tx      *sql.Tx
	stmts   *stmtCache
	misses  []string
	changed change // the most any statement changed: the generations move after commit
	changes *changes
	trace   Tracer          // nil: not traced
	span    context.Context // the transaction's span, each statement's parent
}

// traced starts the span of a statement of the transaction, a child of the
// transaction's own; the statement runs in the caller's context, which
// the caller may cancel.
func (t *txQuerier) traced(query string) func(error) {
	_, end := t.trace(t.span, statementName(query))
	return end
}

func (t *txQuerier) stmt(ctx context.Context, query string) *sql.Stmt {
	if t.changes != nil && t.changed < changedCached {
		t.changed = max(t.changed, t.changes.classify(query))
	}
	if st := t.stmts.lookup(query); st != nil {
		return t.tx.StmtContext(ctx, st)
	}
	if !slices.Contains(t.misses, query) {
		t.misses = append(t.misses, query)
	}
	return nil
}

func (t *txQuerier) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	if t.trace != nil {
		end := t.traced(query)
		defer func() { end(err) }()
	}
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

func (t *txQuerier) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	if t.trace != nil {
		end := t.traced(query)
		defer func() { end(err) }()
	}
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t *txQuerier) QueryRowContext(ctx context.Context, query string, args ...any) (row *sql.Row) {
	if t.trace != nil {
		end := t.traced(query)
		defer func() { end(row.Err()) }()
	}
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// ended prepares the statements the transaction ran as text and moves the
// generations if it wrote cached data or ended sessions.
func (t *txQuerier) ended(ctx context.Context) {
	t.changes.bump(t.changed)
	for _, q := range t.misses {
		t.stmts.prepare(ctx, q)
	}
}

// change is what a statement may change, least first.
type change uint8

const (
	changedNothing     change = iota
	changedRevocations        // may end an access token: RevocationGeneration moves
	changedCached             // changes cached data: both generations move
)

// changes counts the generations of the cached data and of revocations.
type changes struct {
	gen         atomic.Uint64
	revocations atomic.Uint64
	verdicts    sync.Map // SQL text → change
	fleet       *fleet   // nil unless other servers may share the database
}

// uncachedTables change with every sign-in, token or event, and nothing
// the server caches is read from them: writing them keeps the generation.
// Every other table counts as cached, so a table added later invalidates
// the caches until it is listed here. One statement on them is counted as
// a cached change (classify): a new identity, which makes its client one
// that the cache of clients backing none must no longer list.
var uncachedTables = []string{
	"admin_events", "login_events", "consent_events", "user_sessions", "user_consents", "auth_requests",
	"auth_request_steps", "refresh_tokens", "revoked_access_tokens", "device_authorizations", "logout_token_ids",
	"email_outbox", "action_tokens", "pending_logins", "account_deletions", "password_history", "login_failures",
	"user_credentials", "recovery_codes", "webauthn_user_handles", "webauthn_ceremonies", "admin_token_revocations",
	"admin_login_failures", "saml_request_ids", "saml_auth_requests", "saml_sessions", "saml_logouts",
	"scim_tokens", "scim_users", "scim_user_values", "scim_groups",
	"nhi_identities", "nhi_credentials", "nhi_assertion_ids", "nhi_usage", "nhi_audit_logs",
	"nhi_credential_policies", "impersonations", "throttle_failures", "job_runs",
	"webhook_messages", "webhook_attempts", "audit_stream_cursors", "audit_sequences", "audit_records", "risk_assessments",
	"session_risk", "session_risk_events", "risk_refused_tokens", "risk_baselines", "theme_assets", "setup_wizard",
	"users_trigrams", "users_trigrams_pending", "scim_user_values_trigrams", "scim_user_values_trigrams_pending",
}

// revocationTables are the uncached tables an access token's standing is
// read from (AccessTokenLiveUntil): a write to them moves the revocation
// generation, except the ones that cannot end a token: a new session or
// credential, and the statements of sessionKeepers and credentialKeepers.
var revocationTables = []string{"user_sessions", "revoked_access_tokens", "nhi_credentials"}

// sessionKeepers are the statements that write user_sessions without
// ending or shortening any session: they only slide its expiry forward
// (to the later of the old and the new) and record accesses. They run on
// every refresh and sign-in, which must not empty the cache of token
// checks.
var sessionKeepers = []string{touchSessionSQL, reauthenticateSessionSQL}

// credentialKeepers are the statements that write nhi_credentials without
// revoking one: the record of its use, which runs with the tokens it
// obtains, and the upkeep job's.
var credentialKeepers = []string{touchNHICredentialSQL, noticeExpiringSQL, noticeExpiredSQL, expireNHICredentialSQL}

var writeTarget = regexp.MustCompile(`(?is)^\s*(INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+(\w+)`)

// classify says what query may change: cached data for a write to a table
// not in uncachedTables, or any statement that is not a plain read or
// write of one table (a migration, a WITH); revocations for a write to a
// table of revocationTables that may end a token; otherwise nothing.
func (c *changes) classify(query string) change {
	if v, ok := c.verdicts.Load(query); ok {
		return v.(change)
	}
	trimmed := strings.TrimSpace(query)
	verdict := changedCached
	upper := strings.ToUpper(trimmed)
	switch {
	case strings.HasPrefix(upper, "SELECT"), strings.HasPrefix(upper, "SAVEPOINT"), strings.HasPrefix(upper, "RELEASE"),
		strings.HasPrefix(upper, "ROLLBACK TO"):
		verdict = changedNothing // a savepoint's statements change only what the statements inside it do
	case strings.HasPrefix(upper, "WITH") && !strings.Contains(upper, "INSERT") && !strings.Contains(upper, "UPDATE") &&
		!strings.Contains(upper, "DELETE"):
		verdict = changedNothing // a recursive read
	}
	if verdict != changedNothing {
		if m := writeTarget.FindStringSubmatch(trimmed); m != nil && !strings.Contains(trimmed, ";") {
			verb, table := strings.Join(strings.Fields(strings.ToUpper(m[1])), " "), strings.ToLower(m[2])
			switch {
			case !slices.Contains(uncachedTables, table), table == "nhi_identities" && verb == "INSERT INTO":
				verdict = changedCached
			case !slices.Contains(revocationTables, table):
				verdict = changedNothing
			case (table == "user_sessions" || table == "nhi_credentials") && verb == "INSERT INTO":
				verdict = changedNothing // a new session or credential ends nothing
			case slices.Contains(sessionKeepers, query), slices.Contains(credentialKeepers, query):
				verdict = changedNothing
			default:
				verdict = changedRevocations
			}
		}
	}
	c.verdicts.Store(query, verdict)
	return verdict
}

// after moves the generations once a statement outside a transaction that
// wrote cached data or ended sessions has run, here and on the fleet's
// other servers.
//
// A query's rows still hold the writer's one connection when this runs:
// its notification waits for them in a goroutine of its own.
func (c *changes) after(ctx context.Context, d *dbQuerier, query string, rowsOpen bool) {
	if c != nil {
		ch := c.classify(query)
		c.bump(ch)
		if rowsOpen {
			go c.share(ctx, d.stmts.db, d.notify, ch)
		} else {
			c.share(ctx, d.stmts.db, d.notify, ch)
		}
	}
}

func (c *changes) bump(ch change) {
	if ch >= changedCached {
		c.gen.Add(1)
	}
	if ch >= changedRevocations {
		c.revocations.Add(1)
	}
}

// Generation moves after every committed change to data the server
// caches. A cache stores the generation it read before loading a value,
// and the value is current while the generation has not moved.
func (s *Store) Generation() uint64 {
	if s.changes.deaf() {
		return s.changes.gen.Add(1)
	}
	return s.changes.gen.Load()
}

// RevocationGeneration moves after every committed change that may end an
// access token: every move of Generation (a user disabled or deleted, a
// client disabled), a session ended, an access token revoked. Creating a
// session or sliding its expiry forward keeps it.
func (s *Store) RevocationGeneration() uint64 {
	if s.changes.deaf() {
		return s.changes.revocations.Add(1)
	}
	return s.changes.revocations.Load()
}
