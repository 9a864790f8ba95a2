package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/clients"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/scopes"
	"github.com/idenplane/idenplane/app/signingkeys"
	"github.com/idenplane/idenplane/store"
)

// Administrators are people: users of a realm of their own, the system
// realm, as Keycloak's are of its master realm. They sign in through the
// hosted pages like anyone, so the realm's second factors (required by
// default), lockout and login events apply to them, and the console is an
// ordinary OpenID Connect client of that realm. What each may administer is
// their admin account (store.AdminAccount, app/adminaccounts). See
// docs/admin-accounts.md.
const (
	// SystemRealmName is the system realm's name. A realm of that name
	// made by an earlier version stops the start (ensureSystemRealm).
	SystemRealmName = "idenplane-admin"
	// ConsoleClientID is the admin console's client in the system realm.
	ConsoleClientID = "idenplane-console"
	// ConsolePath is where the console is served.
	ConsolePath = "/console"
)

// ensureSystemRealm makes the system realm and its console client at the
// first start, and answers it.
func ensureSystemRealm(ctx context.Context, st *store.Store, now time.Time, baseURL string, makeKey KeyMaker,
	seedAccount func(context.Context, *store.Store, *store.Realm) error) (*store.Realm, error) {
	id, err := st.SystemRealmID(ctx)
	if err == nil {
		return st.GetRealmByID(ctx, id)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if _, err := st.GetRealm(ctx, SystemRealmName); err == nil {
		return nil, fmt.Errorf("a realm named %q exists but is not the system realm: rename it (export, delete, import under another name) with the earlier version, then start this one", SystemRealmName)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	realm := defaultRealm()
	realm.ID, realm.Name, realm.DisplayName = uuid.NewString(), SystemRealmName, "Idenplane administration"
	realm.MFARequired, realm.EventsEnabled, realm.AdminEventsEnabled = true, true, true
	realm.CreatedAt = now.UnixMilli()
	keys, err := signingkeys.NewRealmKeys(makeKey, realm.ID, now)
	if err != nil {
		return nil, err
	}
	err = st.Tx(ctx, func(tx *store.Store) error {
		if err := tx.CreateRealm(ctx, &realm); err != nil {
			return err
		}
		if err := keys.Write(ctx, tx); err != nil {
			return err
		}
		if err := scopes.Seed(ctx, tx, &realm); err != nil {
			return err
		}
		if err := seedAccount(ctx, tx, &realm); err != nil {
			return err
		}
		console := &store.Client{ID: uuid.NewString(), RealmID: realm.ID, ClientID: ConsoleClientID, Name: "Admin console",
			Description: "The admin console, signed in to through this realm's pages.", ClientType: identity.ClientPublic,
			Enabled: true, RedirectURIs: []string{baseURL + ConsolePath + "/callback", baseURL + ConsolePath + "/"},
			GrantTypes: []string{identity.GrantAuthorizationCode, identity.GrantRefreshToken}, BackchannelLogoutSessionRequired: true,
			CreatedAt: realm.CreatedAt}
		if err := identity.ValidateClient(console); err != nil {
			return err
		}
		if err := tx.CreateClient(ctx, console); err != nil {
			return err
		}
		if err := clients.LinkNewScopes(ctx, tx, console); err != nil {
			return err
		}
		return tx.SetSystemRealm(ctx, realm.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("create the system realm: %w", err)
	}
	return &realm, nil
}

// moveAdminUsers makes each password-only admin user of an earlier
// version a user of the system realm with every permission, keeping its
// password hash; the second factor is asked at its next console sign-in.
func moveAdminUsers(ctx context.Context, st *store.Store, realm *store.Realm, now time.Time) error {
	old, err := st.ListAdminUsers(ctx)
	if err != nil {
		return err
	}
	for _, u := range old {
		err := st.Tx(ctx, func(tx *store.Store) error {
			user := &store.User{ID: u.ID, RealmID: realm.ID, Username: u.Username, Enabled: true,
				PasswordHash: u.PasswordHash, PasswordChangedAt: u.CreatedAt, CreatedAt: u.CreatedAt}
			if err := tx.CreateUser(ctx, user); err != nil {
				return err
			}
			if err := tx.CreateAdminAccount(ctx, &store.AdminAccount{UserID: u.ID, Permissions: []string{authz.AllName},
				CreatedAt: now.UnixMilli(), CreatedBy: "upgrade"}); err != nil {
				return err
			}
			return tx.DeleteAdminUser(ctx, u.ID)
		})
		if err != nil {
			return fmt.Errorf("move admin user %s into the system realm: %w", u.Username, err)
		}
	}
	return nil
}

// guardSystemRealm keeps the system realm's routes to holders of
// system:manage: its users are the administrators, so a realm permission
// there (resetting a password, removing a second factor, adding a user)
// would reach every realm.
func guardSystemRealm(r *http.Request, systemRealm string, p *adminPrincipal) error {
	if mux.Vars(r)["realm"] == systemRealm && !p.Permissions.Has(authz.SystemManage) {
		return apperr.Forbidden("the system realm %s needs the permission %s", systemRealm, authz.SystemManage)
	}
	return nil
}
