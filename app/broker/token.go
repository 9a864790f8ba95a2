package broker

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/store"
)

// pathToken is where an application reads the upstream tokens kept for
// the signed-in user (Keycloak's path), under /realms/{realm}.
const pathToken = "/broker/{alias}/token"

// StoredToken answers the upstream token response kept at the user's
// last sign-in through the provider, for a provider with storeToken (off
// by default). The caller is the user's own access token; what it reads
// is the user's own tokens. Anything else is a 404 that says what is
// missing.
func (s *Service) StoredToken(w http.ResponseWriter, r *http.Request, realm *store.Realm, user *store.User) error {
	ctx := r.Context()
	alias := mux.Vars(r)["alias"]
	p, err := s.deps.Store.GetIdentityProvider(ctx, realm.ID, alias)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("identity provider " + alias)
	} else if err != nil {
		return err
	}
	st, err := readSettings(p)
	if err != nil {
		return err
	}
	if !st.StoreToken {
		return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "identity provider %s does not keep tokens (storeToken is off)", alias)
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
