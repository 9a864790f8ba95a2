package broker

import (
	"context"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// A user's federated identities, as Keycloak's admin API shows them:
// GET /admin/realms/{realm}/users/{userId}/federated-identity and DELETE
// .../federated-identity/{alias}. Beyond the spec; see docs/broker.md.

// FederatedIdentityRep is one link of a user to an upstream account.
type FederatedIdentityRep struct {
	IdentityProvider string `json:"identityProvider"` // the provider's alias
	UserID           string `json:"userId"`           // the upstream's subject
	UserName         string `json:"userName"`         // the upstream's username
	Email            string `json:"email"`
	CreatedTimestamp int64  `json:"createdTimestamp"`
}

func toFederatedRep(f *store.FederatedIdentity) FederatedIdentityRep {
	return FederatedIdentityRep{IdentityProvider: f.Alias, UserID: f.Subject, UserName: f.Username, Email: f.Email,
		CreatedTimestamp: f.CreatedAt}
}

// pathUser loads the realm and the user the path's {userId} names.
func (s *Service) pathUser(r *http.Request) (*store.Realm, *store.User, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	u, err := httpx.ChildOf(r, realm.ID, "userId", "user", s.deps.Store.GetUser)
	return realm, u, err
}

// ListUserLinks answers a user's federated identities, by provider alias.
func (s *Service) ListUserLinks(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.pathUser(r)
	if err != nil {
		return err
	}
	links, err := s.deps.Store.ListFederatedIdentities(r.Context(), realm.ID, u.ID)
	if err != nil {
		return err
	}
	return httpx.List(w, links, toFederatedRep)
}

// DeleteUserLink unlinks a user from a provider. An administrator may
// remove a user's last way to sign in; the account itself stays.
func (s *Service) DeleteUserLink(w http.ResponseWriter, r *http.Request) error {
	realm, u, err := s.pathUser(r)
	if err != nil {
		return err
	}
	if err := s.unlink(r.Context(), realm, u, mux.Vars(r)["alias"]); err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// unlink removes u's link to the provider alias; an unknown provider, or
// one u is not linked to, is a 404.
func (s *Service) unlink(ctx context.Context, realm *store.Realm, u *store.User, alias string) error {
	p, err := s.deps.Store.GetIdentityProvider(ctx, realm.ID, alias)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("identity provider " + alias)
	} else if err != nil {
		return err
	}
	err = s.deps.Store.DeleteFederatedIdentity(ctx, realm.ID, u.ID, p.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.NotFound("link of user " + u.Username + " to identity provider " + alias)
	}
	return err
}
