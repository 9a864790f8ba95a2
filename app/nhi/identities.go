package nhi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/app/apperr"
	"github.com/idenplane/idenplane/app/httpx"
	"github.com/idenplane/idenplane/app/identity"
	"github.com/idenplane/idenplane/store"
)

// NHIOwnerRep names who answers for an identity: a user or a group of the
// realm.
type NHIOwnerRep struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// IdentityRep is an identity as the API shows it.
type IdentityRep struct {
	ID          string            `json:"id"`
	Kind        string            `json:"kind"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Owner       *NHIOwnerRep      `json:"owner"`
	Metadata    map[string]string `json:"metadata"`
	State       string            `json:"state"`
	// ClientID is the backing client's clientId (the name): the client_id
	// at the token endpoint.
	ClientID             string `json:"clientId"`
	ServiceAccountUserID string `json:"serviceAccountUserId"`
	CredentialPolicyID   string `json:"credentialPolicyId"` // "" for none
	// AdminPermissions are what a service account's API keys may do at the
	// admin API of its realm.
	AdminPermissions  []string `json:"adminPermissions"`
	CreatedTimestamp  int64    `json:"createdTimestamp"`
	UpdatedTimestamp  int64    `json:"updatedTimestamp"`
	LastUsedTimestamp *int64   `json:"lastUsedTimestamp"` // null: never used
}

func toIdentityRep(n *store.NHI) IdentityRep {
	rep := IdentityRep{ID: n.ID, Kind: n.Kind, Name: n.Name, Description: n.Description, Metadata: n.Metadata,
		State: n.State, ClientID: n.Name, ServiceAccountUserID: n.ServiceAccountUserID, CredentialPolicyID: n.PolicyID,
		AdminPermissions: n.AdminPermissions,
		CreatedTimestamp: n.CreatedAt, UpdatedTimestamp: n.UpdatedAt}
	if n.OwnerType != "" {
		rep.Owner = &NHIOwnerRep{Type: n.OwnerType, ID: n.OwnerID}
	}
	if rep.Metadata == nil {
		rep.Metadata = map[string]string{}
	}
	if rep.AdminPermissions == nil {
		rep.AdminPermissions = []string{}
	}
	if n.LastUsedAt != 0 {
		used := n.LastUsedAt
		rep.LastUsedTimestamp = &used
	}
	return rep
}

// IdentityCreate is the body that creates an identity.
type IdentityCreate struct {
	Kind        *string            `json:"kind"`
	Name        *string            `json:"name"`
	Description *string            `json:"description"`
	Owner       *NHIOwnerRep       `json:"owner"`
	Metadata    *map[string]string `json:"metadata"`
	PolicyID    *string            `json:"credentialPolicyId"`
	Permissions *[]string          `json:"adminPermissions"`
}

// CreateIdentity makes an identity with its backing client and
// service-account user, in one transaction.
func (s *Service) CreateIdentity(w http.ResponseWriter, r *http.Request) error {
	return s.create(w, r, viewOf(r).kind)
}

// create makes an identity of the body's kind, or of kind when it is
// given (a service account is always of kind service).
func (s *Service) create(w http.ResponseWriter, r *http.Request, kind string) error {
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	var body IdentityCreate
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	n, err := s.newIdentity(r, realm, &body, kind)
	if err != nil {
		return err
	}
	if err := s.checkGrant(r, nil, n.AdminPermissions); err != nil {
		return err
	}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		n, err = s.storeIdentity(r, tx, realm, n)
		return err
	})
	if err != nil {
		return err
	}
	return httpx.Created(w, s.location(r, n.ID), toIdentityRep(n))
}

// newIdentity is the identity body asks for, checked; kind, when given,
// is the only kind it may be.
func (s *Service) newIdentity(r *http.Request, realm *store.Realm, body *IdentityCreate, kind string) (*store.NHI, error) {
	switch {
	case body.Name == nil:
		return nil, apperr.Field("name", "is required")
	case kind != "" && body.Kind != nil && *body.Kind != kind:
		return nil, apperr.Field("kind", "must be %s here", kind)
	case kind == "" && body.Kind == nil:
		return nil, apperr.Field("kind", "is required: one of %s", strings.Join(identity.NHIKinds, ", "))
	}
	now := s.now().UnixMilli()
	n := &store.NHI{ID: uuid.NewString(), RealmID: realm.ID, ClientID: uuid.NewString(), Kind: kind, Name: *body.Name,
		State: identity.NHIActive, CreatedAt: now, UpdatedAt: now}
	if body.Kind != nil {
		n.Kind = *body.Kind
	}
	if body.Description != nil {
		n.Description = *body.Description
	}
	if body.Owner != nil {
		n.OwnerType, n.OwnerID = body.Owner.Type, body.Owner.ID
	}
	if body.Metadata != nil {
		n.Metadata = *body.Metadata
	}
	if body.PolicyID != nil {
		n.PolicyID = *body.PolicyID
	}
	if body.Permissions != nil {
		n.AdminPermissions = *body.Permissions
	}
	return n, s.checkIdentity(r.Context(), n)
}

// storeIdentity stores n with its backing client and service-account
// user on tx, and answers it as stored.
func (s *Service) storeIdentity(r *http.Request, tx *store.Store, realm *store.Realm, n *store.NHI) (*store.NHI, error) {
	client := identity.NHIClient(n)
	if err := s.deps.NewClient(r.Context(), tx, realm, &client); err != nil {
		return nil, nameConflict(err, n)
	}
	if err := tx.CreateNHI(r.Context(), n); err != nil {
		return nil, nameConflict(err, n)
	}
	created, err := tx.GetNHI(r.Context(), realm.ID, n.ID)
	if err != nil {
		return nil, err
	}
	return created, s.audit(r, tx, created, "", identity.AuditCreate, "kind "+created.Kind)
}

// nameConflict names the field behind a clash: the name, which is also
// the backing client's clientId and makes its service-account username.
func nameConflict(err error, n *store.NHI) error {
	var ae *apperr.Error
	var ce *store.ConflictError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusConflict:
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "name",
			Message: "name " + n.Name + " is taken: an identity or client of this realm already has it", Cause: err}
	case errors.As(err, &ae) && ae.Field == "clientId":
		return apperr.Field("name", "%s", strings.TrimPrefix(ae.Message, "clientId: "))
	case errors.As(err, &ce):
		return &apperr.Error{Status: http.StatusConflict, Code: apperr.CodeConflict, Field: "name",
			Message: "name " + n.Name + " is taken in this realm", Cause: err}
	}
	return err
}

// checkIdentity validates an identity and checks that its owner exists.
func (s *Service) checkIdentity(ctx context.Context, n *store.NHI) error {
	if err := identity.ValidateNHI(n); err != nil {
		return err
	}
	var err error
	switch n.OwnerType {
	case identity.NHIOwnerUser:
		var u *store.User
		u, err = s.deps.Store.GetUser(ctx, n.RealmID, n.OwnerID)
		if err == nil && u.ServiceAccountClientID != "" {
			return apperr.Field("owner.id", "user %s is a service account: an owner is a person or a group", n.OwnerID)
		}
	case identity.NHIOwnerGroup:
		_, err = s.deps.Store.GetGroup(ctx, n.RealmID, n.OwnerID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return apperr.Field("owner.id", "no %s %s in this realm", n.OwnerType, n.OwnerID)
	} else if err != nil {
		return err
	}
	if n.PolicyID != "" {
		_, err = s.deps.Store.GetNHIPolicy(ctx, n.RealmID, n.PolicyID)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.Field("credentialPolicyId", "no credential policy %s in this realm", n.PolicyID)
		}
	}
	return err
}

// identityFilter reads the list filters: kind, state, owner, search.
func identityFilter(r *http.Request) (store.NHIFilter, error) {
	q := r.URL.Query()
	f := store.NHIFilter{Kind: q.Get("kind"), State: q.Get("state"), Owner: q.Get("owner"), Search: q.Get("search")}
	if f.Kind != "" && !slices.Contains(identity.NHIKinds, f.Kind) {
		return f, apperr.Parameter("kind", "must be one of %s", strings.Join(identity.NHIKinds, ", "))
	}
	if states := []string{identity.NHIActive, identity.NHISuspended, identity.NHIDecommissioned}; f.State != "" &&
		!slices.Contains(states, f.State) {
		return f, apperr.Parameter("state", "must be one of %s", strings.Join(states, ", "))
	}
	return f, nil
}

// ListIdentities lists the realm's identities by name, a page at a time,
// filtered by kind, state, owner and a part of the name.
func (s *Service) ListIdentities(w http.ResponseWriter, r *http.Request) error {
	return s.list(w, r, viewOf(r).kind)
}

func (s *Service) list(w http.ResponseWriter, r *http.Request, kind string) error {
	s.settle(r.Context())
	realm, err := s.deps.Realm(r)
	if err != nil {
		return err
	}
	f, err := identityFilter(r)
	if err != nil {
		return err
	}
	if kind != "" {
		f.Kind = kind
	}
	return httpx.ListPage(w, r, 100, func(first, max int) ([]*store.NHI, error) {
		return s.deps.Store.ListNHIs(r.Context(), realm.ID, f, first, max)
	}, toIdentityRep)
}

// GetIdentity shows one identity.
func (s *Service) GetIdentity(w http.ResponseWriter, r *http.Request) error {
	s.settle(r.Context())
	_, n, err := s.identity(r)
	if err != nil {
		return err
	}
	return httpx.OK(w, toIdentityRep(n))
}

// IdentityUpdate is the body of PUT: the fields of an identity an update
// may change.
type IdentityUpdate struct {
	Description        string            `json:"description"`
	Owner              *NHIOwnerRep      `json:"owner"`
	Metadata           map[string]string `json:"metadata"`
	CredentialPolicyID string            `json:"credentialPolicyId"`
	AdminPermissions   []string          `json:"adminPermissions"`
}

// identityUpdateDefaults names what an update may change: the name, kind
// and state are fixed (the state moves by its own actions).
func identityUpdateDefaults() map[string]any {
	return map[string]any{"description": nil, "owner": nil, "metadata": nil, "credentialPolicyId": nil, "adminPermissions": nil}
}

// UpdateIdentity answers PUT: description, owner and metadata.
func (s *Service) UpdateIdentity(w http.ResponseWriter, r *http.Request) error {
	_, n, err := s.identity(r)
	if err != nil {
		return err
	}
	if err := identity.CheckNHIWritable(n); err != nil {
		return err
	}
	u, err := httpx.ReadUpdate[IdentityUpdate](r, toIdentityRep(n), identityUpdateDefaults())
	if err != nil {
		return err
	}
	before := n.AdminPermissions
	n.Description, n.Metadata, n.OwnerType, n.OwnerID, n.PolicyID = u.Description, u.Metadata, "", "", u.CredentialPolicyID
	n.AdminPermissions = u.AdminPermissions
	if u.Owner != nil {
		n.OwnerType, n.OwnerID = u.Owner.Type, u.Owner.ID
	}
	if err := s.checkIdentity(r.Context(), n); err != nil {
		return err
	}
	if err := s.checkGrant(r, before, n.AdminPermissions); err != nil {
		return err
	}
	n.UpdatedAt = s.now().UnixMilli()
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.UpdateNHI(r.Context(), n); err != nil {
			return err
		}
		return s.audit(r, tx, n, "", identity.AuditUpdate, "")
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, toIdentityRep(n))
}

// DeleteIdentity deletes an identity with its backing client, whose
// deletion cascades to the identity, its credentials and its
// service-account user. A decommissioned identity is kept: it is the
// record of what it was, and its name cannot be taken again.
func (s *Service) DeleteIdentity(w http.ResponseWriter, r *http.Request) error {
	s.settle(r.Context())
	realm, n, err := s.identity(r)
	if err != nil {
		return err
	}
	if err := identity.CheckNHIWritable(n); err != nil {
		return err
	}
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		if err := tx.DeleteClient(r.Context(), realm.ID, n.ClientID); err != nil {
			return err
		}
		return s.audit(r, tx, n, "", identity.AuditDelete, "")
	})
	if err != nil {
		return err
	}
	return httpx.NoContent(w)
}

// Suspend, Reactivate and Decommission move an identity between its
// states; each answers the identity as it is after.
func (s *Service) Suspend(w http.ResponseWriter, r *http.Request) error {
	return s.transition(w, r, identity.NHISuspend)
}

func (s *Service) Reactivate(w http.ResponseWriter, r *http.Request) error {
	return s.transition(w, r, identity.NHIReactivate)
}

func (s *Service) Decommission(w http.ResponseWriter, r *http.Request) error {
	return s.transition(w, r, identity.NHIDecommission)
}

var auditActions = map[string]string{identity.NHISuspend: identity.AuditSuspend, identity.NHIReactivate: identity.AuditReactivate,
	identity.NHIDecommission: identity.AuditDecommission}

// transition applies action. The backing client is enabled exactly when
// the identity is active, so that a suspended or decommissioned identity's
// tokens end as a disabled client's do, for good: reactivating revives none;
// decommissioning also revokes every credential.
func (s *Service) transition(w http.ResponseWriter, r *http.Request, action string) error {
	realm, n, err := s.identity(r)
	if err != nil {
		return err
	}
	state, err := identity.NHITransition(n, action)
	if err != nil {
		return err
	}
	now := s.now().UnixMilli()
	err = s.deps.Store.Tx(r.Context(), func(tx *store.Store) error {
		// Read again inside the transaction: a decommission that committed
		// since the first read is final.
		cur, err := tx.GetNHI(r.Context(), realm.ID, n.ID)
		if err != nil {
			return err
		}
		if state, err = identity.NHITransition(cur, action); err != nil {
			return err
		}
		n = cur
		n.State, n.UpdatedAt = state, now
		if err := tx.UpdateNHI(r.Context(), n); err != nil {
			return err
		}
		if state == identity.NHIDecommissioned {
			if err := tx.RevokeNHICredentials(r.Context(), n.ID, now); err != nil {
				return err
			}
		}
		if err := s.audit(r, tx, n, "", auditActions[action], ""); err != nil {
			return err
		}
		c, err := tx.GetClient(r.Context(), realm.ID, n.ClientID)
		if err != nil {
			return err
		}
		if enabled := state == identity.NHIActive; c.Enabled != enabled {
			c.Enabled = enabled
			// An identity's client signs no people in: its sessions,
			// if any, need no back-channel logout.
			_, err := s.deps.Core.UpdateClient(r.Context(), tx, c)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return httpx.OK(w, toIdentityRep(n))
}
