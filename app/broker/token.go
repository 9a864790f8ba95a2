package broker

import (
	"errors"
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// pathToken is where an application reads the upstream tokens kept for
// the signed-in user (Keycloak's path), under /realms/{realm}.
const pathToken = "/broker/{alias}/token"

// ReadTokenRole is the realm role a user needs for their kept upstream
// tokens to be read: Keycloak's read-token role (of its broker client,
// which a realm here does not have).
const ReadTokenRole = "read-token"

// errNoReadToken refuses a read of kept tokens for a user without
// ReadTokenRole.
var errNoReadToken = apperr.Forbidden("reading the kept upstream tokens needs the realm role %s", ReadTokenRole)

// StoredToken answers the upstream token response kept at the user's
// last sign-in through the provider, for a provider with storeToken (off
// by default). The caller is the user's own access token, and the user
// must hold the realm role read-token (directly, through a group or a
// composite), as Keycloak asks: keeping tokens does not by itself let
// every application of the realm read them. What it reads is the user's
// own tokens. Anything else is a 404 that says what is missing.
func (s *Service) StoredToken(w http.ResponseWriter, r *http.Request, realm *store.Realm, user *store.User) error {
	ctx := r.Context()
	alias := mux.Vars(r)["alias"]
	p, err := httpx.ChildOf(r, realm.ID, "alias", "identity provider", s.deps.Store.GetIdentityProvider)
	if err != nil {
		return err
	}
	st, err := readSettings(p)
	if err != nil {
		return err
	}
	if !st.StoreToken {
		return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "identity provider %s does not keep tokens (storeToken is off)", alias)
	}
	roles, err := s.deps.Store.EffectiveRoles(ctx, user.ID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(roles, func(r *store.Role) bool { return r.ClientID == "" && r.Name == ReadTokenRole }) {
		return errNoReadToken
	}
	link, err := s.deps.Store.FederatedIdentity(ctx, p.ID, user.ID)
	if errors.Is(err, store.ErrNotFound) || err == nil && link.Token == "" {
		return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "no token of identity provider %s is kept for this user", alias)
	} else if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(link.Token))
	return nil
}
