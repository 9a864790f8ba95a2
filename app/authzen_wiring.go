package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/mux"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/app/policies"
	"github.com/idenplane/idenplane/store"
)

// The callers of the AuthZEN endpoints (app/policies): a client of the
// realm, by an access token of its own or by its credentials (Basic),
// entitled to ask by the scope policies.AuthZENScope or the realm role
// policies.AuthZENRole.

// protocolRealmOf is the realm a protocol path names ({realm}), cached; a
// disabled realm is not found.
func protocolRealmOf(a *App) func(r *http.Request) (*store.Realm, error) {
	return func(r *http.Request) (*store.Realm, error) {
		name := mux.Vars(r)["realm"]
		realm, err := a.protocolRealm(r.Context(), name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, apperr.NotFound("realm " + name)
		}
		return realm, err
	}
}

// authzenCaller authenticates an AuthZEN request for app/policies: nil
// (and no error) for no credential or a bad one; an error only for a
// fault.
func authzenCaller(a *App) func(r *http.Request, realm *store.Realm) (*policies.Caller, error) {
	entitled := store.NewLookupCache[bool]() // by client ID: a client authenticated by its credentials
	return func(r *http.Request, realm *store.Realm) (*policies.Caller, error) {
		ctx := r.Context()
		scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		switch {
		case strings.EqualFold(scheme, "Bearer") && cred != "":
			claims, err := a.verifyAccessToken(ctx, realm, strings.TrimSpace(cred))
			if err != nil {
				return nil, nil
			}
			clientID, _ := claims["azp"].(string)
			scopes, _ := claims["scope"].(string)
			return &policies.Caller{ClientID: clientID,
				Entitled: slices.Contains(strings.Fields(scopes), policies.AuthZENScope) || claimHasRole(claims, policies.AuthZENRole)}, nil
		case strings.EqualFold(scheme, "Basic"):
			id, secret, ok := r.BasicAuth()
			if !ok {
				return nil, nil
			}
			// RFC 6749 §2.3.1: the client's ID and secret are form-encoded
			// before they are joined.
			if u, err := url.QueryUnescape(id); err == nil {
				id = u
			}
			if u, err := url.QueryUnescape(secret); err == nil {
				secret = u
			}
			c, err := a.authenticateClient(ctx, realm, id, secret)
			if err != nil {
				if badClientCredential(err) {
					return nil, nil
				}
				return nil, err
			}
			if c.ClientType == identity.ClientPublic {
				return nil, nil
			}
			ok, err = store.Cached(a.store, entitled, c.ID, func() (bool, error) { return clientEntitled(ctx, a.store, realm, c) })
			if err != nil {
				return nil, err
			}
			return &policies.Caller{ClientID: c.ClientID, Entitled: ok}, nil
		}
		return nil, nil
	}
}

// badClientCredential says whether a client authentication's error is a
// refusal (OAuth's invalid_client) rather than a fault.
func badClientCredential(err error) bool {
	var se *op.StatusError
	var oe *oidc.Error
	return errors.Is(err, errClientAuth) || errors.As(err, &se) || errors.As(err, &oe)
}

// claimHasRole says whether a token's realm_access lists the realm role.
func claimHasRole(claims map[string]any, role string) bool {
	access, _ := claims["realm_access"].(map[string]any)
	roles, _ := access["roles"].([]any)
	return slices.Contains(roles, any(role))
}

// clientEntitled says whether a client may ask the AuthZEN endpoints by
// its credentials: the AuthZEN scope is linked to it (default or
// optional), or its service account holds the AuthZEN realm role.
func clientEntitled(ctx context.Context, st *store.Store, realm *store.Realm, c *store.Client) (bool, error) {
	for _, kind := range []string{store.ScopeDefault, store.ScopeOptional} {
		linked, err := st.ListLinkedScopes(ctx, realm.ID, c.ID, kind)
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(linked, func(sc *store.ClientScope) bool { return sc.Name == policies.AuthZENScope }) {
			return true, nil
		}
	}
	sa, err := st.GetServiceAccountUser(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	roles, err := st.EffectiveRoles(ctx, sa.ID)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(roles, func(r *store.Role) bool { return r.ClientID == "" && r.Name == policies.AuthZENRole }), nil
}
