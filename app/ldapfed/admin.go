package ldapfed

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/store"
)

// Provider is a federation provider as the admin API and the realm export
// show it: the bind credential redacted, the sync's state read-only.
type Provider struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	ProviderType   string `json:"providerType"`
	Enabled        bool   `json:"enabled"`
	Priority       int    `json:"priority"`
	BindCredential string `json:"bindCredential"`
	Settings
	CreatedTimestamp int64       `json:"createdTimestamp"`
	SyncStatus       *SyncStatus `json:"syncStatus,omitempty"`
}

// SyncStatus is what the provider shows of its syncs: the last one's
// outcome, and the one running now.
type SyncStatus struct {
	LastSync *SyncResult `json:"lastSync"`
	Running  *Progress   `json:"running"`
}

// rep shows p; a provider whose stored settings do not read is a fault.
func rep(p *store.FederationProvider, includeSecret bool) (Provider, error) {
	s, err := settingsOf(p)
	if err != nil {
		return Provider{}, err
	}
	out := Provider{ID: p.ID, Name: p.Name, ProviderType: p.ProviderType, Enabled: p.Enabled, Priority: p.Priority,
		BindCredential: redacted, Settings: *s, CreatedTimestamp: p.CreatedAt}
	if includeSecret {
		out.BindCredential = p.BindCredential
	}
	return out, nil
}

// adminRep is rep with the sync's state.
func (s *Service) adminRep(p *store.FederationProvider) (Provider, error) {
	out, err := rep(p, false)
	if err != nil {
		return out, err
	}
	status := &SyncStatus{Running: s.progressOf(p.ID)}
	if p.LastSync != "" {
		var last SyncResult
		if err := json.Unmarshal([]byte(p.LastSync), &last); err != nil {
			return out, err
		}
		status.LastSync = &last
	}
	out.SyncStatus = status
	return out, nil
}

func (s *Service) adminReps(ps []*store.FederationProvider) ([]Provider, error) {
	out := make([]Provider, 0, len(ps))
	for _, p := range ps {
		r, err := s.adminRep(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// nameConflict names the field of a provider name the realm has already.
func nameConflict(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return apperr.Conflict("name", "a user federation provider with this name already exists")
	}
	return err
}

// provider loads the realm and the provider the path names.
func (s *Service) provider(r *http.Request) (*store.Realm, *store.FederationProvider, error) {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := httpx.ChildOf(r, realm.ID, "id", "user federation provider", s.deps.Store.GetFederationProvider)
	return realm, p, err
}

// List answers the realm's providers in the order sign-ins ask them.
func (s *Service) List(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	ps, err := s.deps.Store.ListFederationProviders(r.Context(), realm.ID)
	if err != nil {
		return err
	}
	reps, err := s.adminReps(ps)
	if err != nil {
		return err
	}
	return httpx.OK(w, reps)
}

// Create adds a provider.
func (s *Service) Create(w http.ResponseWriter, r *http.Request) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var in Input
	if err := httpx.DecodeJSON(r, &in); err != nil {
		return err
	}
	p := &store.FederationProvider{ID: uuid.NewString(), RealmID: realm.ID, CreatedAt: s.deps.Now().UnixMilli()}
	if _, err := in.apply(p); err != nil {
		return err
	}
	if err := s.deps.Store.CreateFederationProvider(r.Context(), p); err != nil {
		return nameConflict(err)
	}
	out, err := s.adminRep(p)
	if err != nil {
		return err
	}
	return httpx.Created(w, s.deps.BaseURL+r.URL.Path+"/"+p.ID, out)
}

// Get answers one provider with its sync's state.
func (s *Service) Get(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.provider(r)
	if err != nil {
		return err
	}
	out, err := s.adminRep(p)
	if err != nil {
		return err
	}
	return httpx.OK(w, out)
}

// Update changes the fields the body names (PUT) or merges it in
// (PATCH); a field set to null returns to its default. The redacted
// placeholder, or no bindCredential, keeps the stored one.
func (s *Service) Update(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.provider(r)
	if err != nil {
		return err
	}
	current, err := rep(p, false)
	if err != nil {
		return err
	}
	in, err := httpx.ReadUpdate[Input](r, current, inputFields)
	if err != nil {
		return err
	}
	if _, err := in.apply(p); err != nil {
		return err
	}
	if err := s.deps.Store.UpdateFederationProvider(r.Context(), p); err != nil {
		return nameConflict(err)
	}
	s.conns.drop(p.ID)
	out, err := s.adminRep(p)
	if err != nil {
		return err
	}
	return httpx.OK(w, out)
}

// Delete removes a provider with the users imported from it, as Keycloak
// does: they have no password of their own and could not sign in. One
// transaction: either all go, or none.
func (s *Service) Delete(w http.ResponseWriter, r *http.Request) error {
	realm, p, err := s.provider(r)
	if err != nil {
		return err
	}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if err := s.deleteLinkedUsers(r.Context(), tx, realm, p.ID); err != nil {
			return err
		}
		return tx.DeleteFederationProvider(r.Context(), realm.ID, p.ID)
	})
	if err != nil {
		return err
	}
	s.conns.drop(p.ID)
	return httpx.NoContent(w)
}

func (s *Service) deleteLinkedUsers(ctx context.Context, tx *store.Store, realm *store.Realm, providerID string) error {
	links, err := tx.FederationLinks(ctx, realm.ID, providerID)
	if err != nil {
		return err
	}
	for _, l := range links {
		u, err := tx.GetUser(ctx, realm.ID, l.UserID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if err := s.deps.Identity().DeleteUser(ctx, tx, realm, u); err != nil {
			return err
		}
	}
	return nil
}
