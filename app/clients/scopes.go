package clients

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Scopes every new client gets, as Keycloak assigns them: defaults always
// apply, optional ones when the client asks for them.
var (
	NewClientDefaultScopes  = []string{"openid", "profile", "email", "roles", "web-origins"}
	NewClientOptionalScopes = []string{"address", "phone", "offline_access", "microprofile-jwt", "organization"}
)

// LinkNewScopes assigns a new client the realm's standard scopes, those of
// them that exist, as Keycloak does. Every path that makes a client calls
// it: the admin API, the non-human identities (StoreNew), and the clients
// the server makes itself (the account console, the admin console).
func LinkNewScopes(ctx context.Context, tx *store.Store, c *store.Client) error {
	scopes, err := tx.ListClientScopes(ctx, c.RealmID)
	if err != nil {
		return err
	}
	for _, s := range scopes {
		kind := ""
		switch {
		case slices.Contains(NewClientDefaultScopes, s.Name):
			kind = store.ScopeDefault
		case slices.Contains(NewClientOptionalScopes, s.Name):
			kind = store.ScopeOptional
		default:
			continue
		}
		if err := tx.LinkClientScope(ctx, c.ID, s.ID, kind); err != nil {
			return err
		}
	}
	return nil
}

// LinkedScopeRep is a client scope as a client's scope lists show it.
type LinkedScopeRep struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Protocol    string `json:"protocol"`
}

func toLinkedScopeRep(s *store.ClientScope) LinkedScopeRep {
	return LinkedScopeRep{ID: s.ID, Name: s.Name, Description: s.Description, Protocol: s.Protocol}
}

// ListLinkedScopes lists a client's default or optional scopes by name.
func (s *Service) ListLinkedScopes(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		realm, c, err := s.client(r)
		if err != nil {
			return err
		}
		scopes, err := s.deps.Store.ListLinkedScopes(r.Context(), realm.ID, c.ID, kind)
		if err != nil {
			return err
		}
		return httpx.List(w, scopes, toLinkedScopeRep)
	}
}

// LinkedScopeAdd is the body that assigns a scope to a client.
type LinkedScopeAdd struct {
	ClientScopeID *string `json:"clientScopeId"`
}

// AddLinkedScope assigns a realm scope to a client as default or optional
// and answers 201 with the scope. A scope is assigned one way at most.
func (s *Service) AddLinkedScope(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		realm, c, err := s.client(r)
		if err != nil {
			return err
		}
		var body LinkedScopeAdd
		if err := httpx.DecodeJSON(r, &body); err != nil {
			return err
		}
		if body.ClientScopeID == nil {
			return apperr.Field("clientScopeId", "is required")
		}
		id := *body.ClientScopeID
		if err := uuid.Validate(id); err != nil || len(id) != 36 {
			return apperr.Field("clientScopeId", "must be a UUID")
		}
		scope, err := s.deps.Store.GetClientScope(r.Context(), realm.ID, id)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.NotFound("client scope " + id)
		} else if err != nil {
			return err
		}
		err = s.deps.Store.LinkClientScope(r.Context(), c.ID, scope.ID, kind)
		if errors.Is(err, store.ErrConflict) {
			return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "clientScopeId", Cause: err,
				Message: "client scope " + scope.Name + " is already assigned to client " + c.ClientID +
					" as a default or optional scope; remove it first to change how"}
		} else if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusCreated, toLinkedScopeRep(scope))
		return nil
	}
}

// RemoveLinkedScope unassigns a scope; it must be assigned as that kind.
func (s *Service) RemoveLinkedScope(kind string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		_, c, err := s.client(r)
		if err != nil {
			return err
		}
		id := mux.Vars(r)["scopeId"]
		err = s.deps.Store.UnlinkClientScope(r.Context(), c.ID, id, kind)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.New(http.StatusNotFound, apperr.CodeNotFound, "client scope %s is not a %s scope of client %s", id, kind, c.ClientID)
		} else if err != nil {
			return err
		}
		return httpx.NoContent(w)
	}
}
