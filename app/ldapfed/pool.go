package ldapfed

import (
	"context"
	"sync"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/idenplane/idenplane/store"
)

// The sign-ins' connections: a few per provider, bound as its account,
// kept between sign-ins so that one costs a search and a bind rather than
// a connection, a TLS handshake and two binds. A connection is reused only
// when it is healthy: not closed by either side, and, after a while idle,
// answering a probe within readTimeout.

const (
	maxIdlePerProvider = 4
	// probeAfter: a connection idle longer is probed before use.
	probeAfter = 30 * time.Second
	// maxIdleTime: a connection idle longer is closed, not reused: servers
	// and firewalls drop idle connections silently.
	maxIdleTime = 5 * time.Minute
)

type pooledConn struct {
	c      *ldap.Conn
	idleAt time.Time
}

// providerPool is one provider's idle connections, for the settings and
// credential they were made with (version).
type providerPool struct {
	version string
	idle    []pooledConn
}

type connPool struct {
	mu    sync.Mutex
	pools map[string]*providerPool // by provider ID
	now   func() time.Time
}

func newConnPool(now func() time.Time) *connPool {
	return &connPool{pools: map[string]*providerPool{}, now: now}
}

func poolVersion(p *store.FederationProvider) string { return p.Config + "\x00" + p.BindCredential }

// take pops an idle connection of p made with its current settings, or
// nil.
func (cp *connPool) take(p *store.FederationProvider) *pooledConn {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	pp := cp.pools[p.ID]
	if pp == nil || pp.version != poolVersion(p) {
		if pp != nil {
			closeAll(pp.idle)
		}
		cp.pools[p.ID] = &providerPool{version: poolVersion(p)}
		return nil
	}
	for len(pp.idle) > 0 {
		pc := pp.idle[len(pp.idle)-1]
		pp.idle = pp.idle[:len(pp.idle)-1]
		if pc.c.IsClosing() || cp.now().Sub(pc.idleAt) > maxIdleTime {
			pc.c.Close()
			continue
		}
		return &pc
	}
	return nil
}

// put keeps c for p's next sign-in, or closes it when the pool is full or
// the provider changed meanwhile.
func (cp *connPool) put(p *store.FederationProvider, c *ldap.Conn) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	pp := cp.pools[p.ID]
	if c.IsClosing() || pp == nil || pp.version != poolVersion(p) || len(pp.idle) >= maxIdlePerProvider {
		c.Close()
		return
	}
	pp.idle = append(pp.idle, pooledConn{c: c, idleAt: cp.now()})
}

// drop closes the idle connections of a provider that changed or went.
func (cp *connPool) drop(providerID string) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if pp := cp.pools[providerID]; pp != nil {
		closeAll(pp.idle)
		delete(cp.pools, providerID)
	}
}

func closeAll(idle []pooledConn) {
	for _, pc := range idle {
		pc.c.Close()
	}
}

// get gives a connection to p's directory bound as its account, from the
// pool (probed when it idled long) or new. It is closed if ctx ends while
// it is out; done gives it back (reuse: it is bound as the account again)
// or closes it.
func (cp *connPool) get(ctx context.Context, p *store.FederationProvider, set *Settings) (c *ldap.Conn, done func(reuse bool), err error) {
	for pc := cp.take(p); pc != nil; pc = cp.take(p) {
		stop := context.AfterFunc(ctx, func() { pc.c.Close() })
		if cp.now().Sub(pc.idleAt) < probeAfter || probe(pc.c) == nil {
			return pc.c, cp.giveBack(p, pc.c, stop), nil
		}
		stop()
		pc.c.Close()
	}
	c, err = dial(ctx, set)
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	if err := bindAs(c, set.BindDN, p.BindCredential); err != nil {
		stop()
		c.Close()
		return nil, nil, classify(err, set, "bind as "+set.BindDN)
	}
	return c, cp.giveBack(p, c, stop), nil
}

func (cp *connPool) giveBack(p *store.FederationProvider, c *ldap.Conn, stop func() bool) func(bool) {
	return func(reuse bool) {
		if stop() && reuse {
			cp.put(p, c)
			return
		}
		c.Close()
	}
}

// probe checks that an idle connection still answers: one round trip,
// within the connection's read timeout.
func probe(c *ldap.Conn) error {
	_, err := c.Search(ldap.NewSearchRequest("", ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false,
		"(objectClass=*)", []string{"1.1"}, nil))
	return err
}
