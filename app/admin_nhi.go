package app

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/authz"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// principalServiceAccount is the kind of an admin principal that is a
// service account, authenticated by one of its API keys.
const principalServiceAccount = "service-account"

// authenticateServiceAccount admits a service account's API key at the
// admin API, with the permissions the account was granted and nothing
// more, and only in its own realm: a route of another realm, or of none
// (realms, admin sign-in), does not know the key.
func (a *App) authenticateServiceAccount(r *http.Request, key string) (*adminPrincipal, error) {
	ctx := r.Context()
	realm, err := confiningRealm(r, a.cachedRealm)
	if err != nil {
		return nil, err
	}
	n, cred, err := a.id.CheckAPIKey(ctx, realm.ID, key)
	switch {
	case errors.Is(err, identity.ErrBadCredentials), errors.Is(err, identity.ErrNHIInactive):
		if n != nil {
			if err := a.id.RecordNHIRefusal(ctx, n, a.adminActor(r), err.Error()); err != nil {
				a.log.ErrorContext(ctx, "refusal of an identity not recorded", "identity", n.ID, "err", err)
			}
		}
		return nil, errUnauthorized
	case err != nil:
		return nil, err
	case n.Kind != identity.NHIService:
		return nil, errUnauthorized
	}
	// The key acts as the account's user and client: while either is
	// disabled, it does not act at all.
	if enabled, err := serviceAccountEnabled(ctx, realm, n, a.cachedClient, a.serviceAccountUser); err != nil {
		return nil, err
	} else if !enabled {
		if err := a.id.RecordNHIRefusal(ctx, n, a.adminActor(r), errServiceAccountDisabled.Error()); err != nil {
			a.log.ErrorContext(ctx, "refusal of an identity not recorded", "identity", n.ID, "err", err)
		}
		return nil, errUnauthorized
	}
	perms, err := authz.Parse(n.AdminPermissions)
	if err != nil {
		return nil, err
	}
	p := &adminPrincipal{Kind: principalServiceAccount, UserID: n.ID, Username: n.Name, Permissions: perms}
	act := a.adminActor(r)
	act.Type, act.ID, act.Name = identity.ActorIdentity, n.ID, n.Name
	if err := a.id.RecordNHIUse(ctx, n, cred, store.NHIUsage{}, act, "admin API "+r.Method+" "+r.URL.Path); err != nil {
		a.log.ErrorContext(ctx, "use of an identity not recorded", "identity", n.ID, "err", err)
	}
	return p, nil
}

// confiningRealm is the realm an API key confined to one realm (a service
// account's, or a named admin key given a realm) may act in: the realm the
// route's path names, looked up with realmNamed. A route of no realm
// (realms, admin sign-in, admin keys) or of an unknown realm does not know
// such a key.
func confiningRealm(r *http.Request, realmNamed func(context.Context, string) (*store.Realm, error)) (*store.Realm, error) {
	name := mux.Vars(r)["realm"]
	if name == "" {
		return nil, apperr.Unauthorized("an API key confined to a realm acts only on that realm's routes")
	}
	realm, err := realmNamed(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errUnauthorized
	}
	return realm, err
}

// errServiceAccountDisabled: the user or the client a service account acts
// as is disabled.
var errServiceAccountDisabled = errors.New("the service account's user or client is disabled")

// serviceAccountEnabled says whether identity n's client and
// service-account user are both there and enabled; both are read with
// clientOf and userOf, the caches, which every write to them empties.
func serviceAccountEnabled(ctx context.Context, realm *store.Realm, n *store.NHI,
	clientOf func(ctx context.Context, realmID, clientID string) (*store.Client, error),
	userOf func(ctx context.Context, clientID string) (*store.User, error)) (bool, error) {
	c, err := clientOf(ctx, realm.ID, n.Name)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	u, err := userOf(ctx, n.ClientID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return c.Enabled && u.Enabled, nil
}

// callerPermissions are the permissions of an admin request's caller.
func callerPermissions(r *http.Request) authz.Set {
	if p := principalFrom(r.Context()); p != nil {
		return p.Permissions
	}
	return authz.Set{}
}
