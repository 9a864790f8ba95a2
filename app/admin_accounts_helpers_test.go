package app

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/store"
)

// systemMFA turns the system realm's second-factor requirement on or off.
func (s *testServer) systemMFA(on bool) {
	s.t.Helper()
	ctx := context.Background()
	sys, err := s.store.GetRealm(ctx, SystemRealmName)
	if err != nil {
		s.t.Fatal(err)
	}
	sys.MFARequired = on
	if err := s.store.UpdateRealm(ctx, sys); err != nil {
		s.t.Fatal(err)
	}
}

// createAdmin stores an administrator with a password hash and the given
// permissions (every one when none), straight in the store.
func (s *testServer) createAdmin(t testing.TB, username, hash string, perms ...authz.Permission) *store.User {
	t.Helper()
	ctx := context.Background()
	sys, err := s.store.GetRealm(ctx, SystemRealmName)
	if err != nil {
		t.Fatal(err)
	}
	u := &store.User{ID: uuid.NewString(), RealmID: sys.ID, Username: username, Enabled: true, PasswordHash: hash, CreatedAt: 1}
	names := []string{authz.AllName}
	if len(perms) > 0 {
		names = nil
		for _, p := range perms {
			names = append(names, string(p))
		}
	}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateUser(ctx, u); err != nil {
			return err
		}
		return tx.CreateAdminAccount(ctx, &store.AdminAccount{UserID: u.ID, Permissions: names, CreatedAt: 1, CreatedBy: "test"})
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// systemUser is the system realm's user of username.
func (s *testServer) systemUser(username string) (*store.User, error) {
	ctx := context.Background()
	sys, err := s.store.GetRealm(ctx, SystemRealmName)
	if err != nil {
		return nil, err
	}
	return s.store.GetUserByUsername(ctx, sys.ID, username)
}
