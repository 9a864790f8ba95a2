package identity

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/idenplane/idenplane/store"
)

// The uses of identities' credentials are written behind the requests
// they record, many to a transaction: an identity's token or an API key's
// introspection would otherwise wait for a commit of its own, which cost
// it half its throughput beside an ordinary client's (docs/nhi.md).
const (
	// nhiUseDelay is how long a use waits for others to share its
	// transaction: at most the uses of this long are lost to a crash.
	nhiUseDelay = 100 * time.Millisecond
	// nhiUseBacklog is the most uses kept waiting: the request that finds
	// this many writes them itself, before it answers.
	nhiUseBacklog = 512
)

// nhiUse is one use of a credential on its way to the database.
type nhiUse struct {
	n     *store.NHI
	cred  *store.NHICredential
	usage store.NHIUsage
	audit *store.NHIAudit
}

// nhiUses is the queue of uses not yet written.
type nhiUses struct {
	mu      sync.Mutex
	pending []nhiUse
	timer   *time.Timer // the write to come; nil when none is due
	writing sync.Mutex  // one write at a time, so uses land in order
}

// RecordNHIUse records a use of cred, a credential of n; u counts what it
// got. The use (audit record, the day's count, the last-use times, the
// latter at most once a minute) is queued and written within nhiUseDelay
// with the others of that time; FlushNHIUses writes the queue at once.
func (c *Core) RecordNHIUse(ctx context.Context, n *store.NHI, cred *store.NHICredential, u store.NHIUsage, actor Actor, details string) error {
	now := c.now()
	u.Day = NHIDay(now)
	use := nhiUse{n: n, cred: cred, usage: u, audit: c.nhiAudit(n, cred.ID, AuditCredentialUse, actor, details)}
	q := &c.nhiUses
	q.mu.Lock()
	q.pending = append(q.pending, use)
	full := len(q.pending) >= nhiUseBacklog
	if !full && q.timer == nil {
		q.timer = time.AfterFunc(nhiUseDelay, func() {
			if err := c.FlushNHIUses(context.Background()); err != nil {
				c.log.Error("uses of identities not recorded", "err", err)
			}
		})
	}
	q.mu.Unlock()
	if full {
		return c.FlushNHIUses(context.WithoutCancel(ctx))
	}
	return nil
}

// FlushNHIUses writes the uses queued so far, in one transaction. Readers
// of the uses (the audit log, the statistics, the sweep of unused
// credentials) call it first, and so does the server's shutdown.
func (c *Core) FlushNHIUses(ctx context.Context) error {
	q := &c.nhiUses
	q.writing.Lock()
	defer q.writing.Unlock()
	q.mu.Lock()
	batch := q.pending
	q.pending = nil
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	q.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := c.store.Tx(ctx, func(tx *store.Store) error { return writeNHIUses(ctx, tx, batch) })
	if err == nil || len(batch) == 1 {
		return err
	}
	// A use of an identity deleted meanwhile must not lose the others:
	// each alone, then.
	var errs []error
	for _, u := range batch {
		if err := c.store.Tx(ctx, func(tx *store.Store) error { return writeNHIUses(ctx, tx, []nhiUse{u}) }); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeNHIUses writes a batch of uses: each audit record, one count per
// identity and day, and each credential's and identity's last use once,
// when the one stored when it was read is older than lastUsedPrecision.
func writeNHIUses(ctx context.Context, tx *store.Store, batch []nhiUse) error {
	type day struct {
		nhi string
		day int64
	}
	counts := map[day]store.NHIUsage{}
	var order []day
	creds, identities := map[string]int64{}, map[string]int64{}
	stale := func(stored, at int64) bool { return at-stored >= lastUsedPrecision.Milliseconds() }
	for _, u := range batch {
		if err := tx.AddNHIAudit(ctx, u.audit); err != nil {
			return err
		}
		if stale(u.cred.LastUsedAt, u.audit.Time) {
			creds[u.cred.ID] = max(creds[u.cred.ID], u.audit.Time)
		}
		if stale(u.n.LastUsedAt, u.audit.Time) {
			identities[u.n.ID] = max(identities[u.n.ID], u.audit.Time)
		}
		if u.usage == (store.NHIUsage{Day: u.usage.Day}) {
			continue
		}
		k := day{u.n.ID, u.usage.Day}
		sum, seen := counts[k]
		if !seen {
			order = append(order, k)
			sum.Day = k.day
		}
		sum.Tokens += u.usage.Tokens
		sum.Failures += u.usage.Failures
		sum.Introspections += u.usage.Introspections
		counts[k] = sum
	}
	for _, k := range order {
		if err := tx.AddNHIUsage(ctx, k.nhi, counts[k]); err != nil {
			return err
		}
	}
	for id, at := range creds {
		if err := tx.TouchNHICredential(ctx, id, at); err != nil {
			return err
		}
	}
	for id, at := range identities {
		if err := tx.TouchNHI(ctx, id, at); err != nil {
			return err
		}
	}
	return nil
}
