package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/roles"
	"github.com/idenplane/idenplane/store"
)

// BenchmarkEffectiveRoles resolves the effective roles of a user in 5
// groups, each the leaf of a 3-level branch, holding 50 roles: 5 mapped
// directly, 30 through the 15 groups, 15 only through composites (a chain
// of composites of composites, the last 10 of them client roles). Other
// groups, roles and mappings fill the tables around them, so a query that
// scans a whole table instead of seeking shows in the figures.
func BenchmarkEffectiveRoles(b *testing.B) {
	s := newTestServer(b)
	realm := s.benchCreateRealm(b, "bench")
	userID := rolesBenchSeed(b, s, realm)
	ctx := context.Background()

	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		if roles, err := s.store.EffectiveRoles(ctx, userID); err != nil || len(roles) != 50 {
			b.Fatalf("EffectiveRoles: %d roles (%v), want 50", len(roles), err)
		}
		for b.Loop() {
			if _, err := s.store.EffectiveRoles(ctx, userID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("http", func(b *testing.B) {
		b.ReportAllocs()
		path := "/admin/realms/bench/users/" + userID + "/role-mappings/realm/composite"
		var reps []roles.RoleRep
		if err := json.Unmarshal(s.benchDo(b, http.MethodGet, path, nil, http.StatusOK).Body.Bytes(), &reps); err != nil || len(reps) != 40 {
			b.Fatalf("GET realm/composite: %d roles (%v), want the 40 realm roles", len(reps), err)
		}
		for b.Loop() {
			s.benchDo(b, http.MethodGet, path, nil, http.StatusOK)
		}
	})
}

// rolesBenchSeed builds the benchmark's roles, groups and mappings in one
// transaction and returns the user's ID.
func rolesBenchSeed(b *testing.B, s *testServer, realm *store.Realm) string {
	b.Helper()
	ctx := context.Background()
	userID := uuid.NewString()
	err := s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateUser(ctx, &store.User{ID: userID, RealmID: realm.ID, Username: "bench-user", Enabled: true}); err != nil {
			return err
		}
		client := &store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientID: "app", ClientType: "CONFIDENTIAL", Enabled: true}
		if err := tx.CreateClient(ctx, client); err != nil {
			return err
		}
		roles := make([]string, 50)
		for i := range roles {
			r := &store.Role{ID: uuid.NewString(), RealmID: realm.ID, Name: fmt.Sprintf("role-%02d", i)}
			if i >= 40 {
				r.ClientID = client.ID
			}
			if err := tx.CreateRole(ctx, r); err != nil {
				return err
			}
			roles[i] = r.ID
		}
		if err := tx.AddRoleMappings(ctx, store.UserRoles(userID), roles[:5]); err != nil {
			return err
		}
		next := 5 // the next role to map to a group
		for branch := range 5 {
			parent := ""
			for level := range 3 {
				g := &store.Group{ID: uuid.NewString(), RealmID: realm.ID, ParentID: parent, Name: fmt.Sprintf("g%d-%d", branch, level)}
				if err := tx.CreateGroup(ctx, g); err != nil {
					return err
				}
				if err := tx.AddRoleMappings(ctx, store.GroupRoles(g.ID), roles[next:next+2]); err != nil {
					return err
				}
				next += 2
				parent = g.ID
			}
			if err := tx.AddGroupMember(ctx, parent, userID); err != nil {
				return err
			}
		}
		if err := rolesBenchNoise(ctx, tx, realm); err != nil {
			return err
		}
		// Roles 35-49 are held only through composites: each of roles 5, 7,
		// …, 33 includes one of them, and each includes the next.
		for k := range 15 {
			if err := tx.AddComposites(ctx, roles[5+2*k], roles[35+k:36+k]); err != nil {
				return err
			}
			if k < 14 {
				if err := tx.AddComposites(ctx, roles[35+k], roles[36+k:37+k]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed: %v", err)
	}
	return userID
}

// rolesBenchNoise adds 1,000 roles, half of them composite, and 500 groups
// with 10 mappings and 10 members each that the benchmark's user has
// nothing to do with.
func rolesBenchNoise(ctx context.Context, tx *store.Store, realm *store.Realm) error {
	roles := make([]string, 1000)
	for i := range roles {
		r := &store.Role{ID: uuid.NewString(), RealmID: realm.ID, Name: fmt.Sprintf("noise-%04d", i)}
		if err := tx.CreateRole(ctx, r); err != nil {
			return err
		}
		roles[i] = r.ID
		if i%2 == 1 {
			if err := tx.AddComposites(ctx, r.ID, roles[i-1:i]); err != nil {
				return err
			}
		}
	}
	for i := range 500 {
		g := &store.Group{ID: uuid.NewString(), RealmID: realm.ID, Name: fmt.Sprintf("noise-%03d", i)}
		if err := tx.CreateGroup(ctx, g); err != nil {
			return err
		}
		if err := tx.AddRoleMappings(ctx, store.GroupRoles(g.ID), roles[i%99*10:i%99*10+10]); err != nil {
			return err
		}
		for j := range 10 {
			u := &store.User{ID: uuid.NewString(), RealmID: realm.ID, Username: fmt.Sprintf("noise-%03d-%d", i, j), Enabled: true}
			if err := tx.CreateUser(ctx, u); err != nil {
				return err
			}
			if err := tx.AddGroupMember(ctx, g.ID, u.ID); err != nil {
				return err
			}
			if err := tx.AddRoleMappings(ctx, store.UserRoles(u.ID), roles[j*100:j*100+1]); err != nil {
				return err
			}
		}
	}
	return nil
}
