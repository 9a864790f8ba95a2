package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"

	"github.com/go-ldap/ldap/v3"
)

// ldap-bind: people of an OpenLDAP directory sign in with the password
// grant, their password checked by a bind as their entry. The directory
// is a real slapd the scenario starts; the realm federates it through
// the admin API, and a sync imports its people first, so that each
// sign-in is the steady one of a linked user: the entry found again by
// its stable ID, the bind, the tokens.

// floorLDAPBind is the bind alone: the directory's binds as its people
// over as many connections as the generator has cores.
const floorLDAPBind = "LDAP bind"

func prepareLDAP(ctx context.Context, e *loadEnv) (release func(context.Context) error, err error) {
	people := min(ldapPeople, e.users)
	d, err := startDirectory(ctx, filepath.Join(e.dir, "slapd"), people, e.password)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.stop()
		}
	}()
	path := "/admin/realms/" + loadRealm + "/user-federation"
	var provider struct{ ID string }
	if err := e.admin(ctx, http.MethodPost, path, map[string]any{"name": "directory", "providerType": "ldap",
		"vendor": "openldap", "connectionUrl": d.url, "bindDn": ldapAdminDN, "bindCredential": ldapAdminPass,
		"usersDn": ldapPeopleDN}, http.StatusCreated, &provider); err != nil {
		return nil, err
	}
	var sync struct{ Created, Failed int }
	if err := e.admin(ctx, http.MethodPost, path+"/"+provider.ID+"/sync", nil, http.StatusOK, &sync); err != nil {
		return nil, err
	}
	if sync.Created != people || sync.Failed != 0 {
		return nil, fmt.Errorf("%w: the directory's sync created %d of %d people, %d failed", errLoadSetup, sync.Created, people, sync.Failed)
	}
	e.ldap = d
	return func(ctx context.Context) error {
		e.ldap = nil
		defer d.stop()
		// The provider goes with the users it imported: the scenarios
		// after this one find the realm as it was.
		return e.admin(ctx, http.MethodDelete, path+"/"+provider.ID, nil, http.StatusNoContent, nil)
	}, nil
}

// ldapWorkers sign random people of the directory in.
func ldapWorkers(ctx context.Context, e *loadEnv, t *loadTarget, hc *loadConns, n int) ([]loadCall, error) {
	if e.ldap == nil {
		return nil, errors.New("ldap-bind: no directory")
	}
	c, auth, path, people := t.client(hc), t.appAuth, t.tokenPath(loadRealm), e.ldap.people
	return same(func(ctx context.Context) (bool, error) {
		form := url.Values{"grant_type": {grantPassword}, "username": {ldapUsername(rand.IntN(people))}, "password": {e.password}}
		_, shed, err := c.do(ctx, http.MethodPost, path, form, auth, http.StatusOK)
		return shed, err
	}, n), nil
}

// ldapBindFloor binds as random people over one connection per core of
// the generator, as the floors of crypto use every core.
func ldapBindFloor(e *loadEnv) (func(), error) {
	d := e.ldap
	if d == nil {
		return nil, errors.New("no directory")
	}
	pool := make(chan *ldap.Conn, runtime.GOMAXPROCS(0))
	for range cap(pool) {
		c, err := d.dial()
		if err != nil {
			return nil, err
		}
		d.floorConns = append(d.floorConns, c)
		// A wrong password binds as quickly, and would make a floor no
		// sign-in reaches.
		if err := c.Bind(ldapUserDN(0), e.password); err != nil {
			return nil, fmt.Errorf("bind as %s: %w", ldapUserDN(0), err)
		}
		pool <- c
	}
	people, password := d.people, e.password
	return func() {
		c := <-pool
		_ = c.Bind(ldapUserDN(rand.IntN(people)), password)
		pool <- c
	}, nil
}
